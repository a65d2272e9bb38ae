using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// A release uploaded whole gives its unchanged objects new Last-Modified times: the replica that
/// held the previous release links their files rather than copying them, and still sends what a
/// replica that downloaded the release sends (docs/deployment.md, "Serving from a bucket").
/// </summary>
[Collection(CephCollection.Name)]
public sealed class BucketUnchangedObjectTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(30);

    // Above MaxCachedFileSize and MaxHashedFileSize below: sent from disk, with an ETag made from
    // its length and time rather than its bytes.
    private static readonly byte[] s_large = Enumerable.Range(0, 4000).Select(i => (byte)(i * 7)).ToArray();

    [CephFact]
    public async Task Pointer_UnchangedObjectInNewRelease_LinkedAndValidatorsAgreeWithAFreshReplica()
    {
        var bucket = await rgw.NewBucketAsync();
        await UploadReleaseAsync(bucket, "r1");
        await rgw.PutAsync(bucket, "app/current", "r1");
        await using var held = await StartAsync(bucket);
        await BucketHost.EventuallyAsync(async () => await held.TextAsync("/index.html") == "page r1", s_bound, "release r1 served");
        var r1Folder = held.Source.Sync.CurrentFolder!;
        var r1Asset = await ValidatorsAsync(held, "/assets/a.css");
        var assetNode = Node(Path.Combine(r1Folder, "assets/a.css"));
        var pageNode = Node(Path.Combine(r1Folder, "index.html"));

        // The listing keeps whole seconds at most: r2's objects are listed with a later second.
        await Task.Delay(1100);
        await UploadReleaseAsync(bucket, "r2");
        await rgw.PutAsync(bucket, "app/current", "r2");
        await BucketHost.EventuallyAsync(async () => await held.TextAsync("/index.html") == "page r2", s_bound, "release r2 served by the replica that held r1");
        var r2Folder = held.Source.Sync.CurrentFolder!;
        Assert.NotEqual(r1Folder, r2Folder);

        // The unchanged object is the same file; the changed one was downloaded.
        Assert.Equal(assetNode, Node(Path.Combine(r2Folder, "assets/a.css")));
        Assert.NotEqual(pageNode, Node(Path.Combine(r2Folder, "index.html")));

        // Its ETag names the same bytes; its Last-Modified is the new listing's, as S3 states it.
        var listed = await ListedLastModifiedAsync(bucket, "app/releases/r2/assets/a.css");
        var linked = await ValidatorsAsync(held, "/assets/a.css");
        Assert.Equal(r1Asset.ETag, linked.ETag);
        Assert.Equal(listed, linked.LastModified);
        Assert.NotEqual(r1Asset.LastModified, linked.LastModified);

        // A replica that starts now downloads r2 whole, and answers every file as the one that linked.
        await using var fresh = await StartAsync(bucket);
        await BucketHost.EventuallyAsync(async () => await fresh.TextAsync("/index.html") == "page r2", s_bound, "release r2 served by a new replica");
        foreach (var path in new[] { "/index.html", "/assets/a.css", "/assets/large.bin" })
        {
            var expected = await ValidatorsAsync(held, path);
            Assert.Equal(expected, await ValidatorsAsync(fresh, path));

            // Either validator taken from one replica is a 304 at the other.
            Assert.Equal(HttpStatusCode.NotModified, await ConditionalAsync(fresh, path, request => request.Headers.IfNoneMatch.Add(EntityTagHeaderValue.Parse(expected.ETag))));
            Assert.Equal(HttpStatusCode.NotModified, await ConditionalAsync(fresh, path, request => request.Headers.TryAddWithoutValidation("If-Modified-Since", expected.LastModified)));
        }
    }

    private Task<BucketHost> StartAsync(string bucket)
        => BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/app", b => b.Pointer = "current", o =>
        {
            o.MaxCachedFileSize = 1024;
            o.MaxHashedFileSize = 2048;
        });

    private async Task UploadReleaseAsync(string bucket, string release)
    {
        var prefix = $"app/releases/{release}/";
        await rgw.PutAsync(bucket, prefix + "index.html", "page " + release);
        await rgw.PutAsync(bucket, prefix + "assets/a.css", "body { color: teal }");
        await rgw.PutAsync(bucket, prefix + "assets/large.bin", s_large);
    }

    /// <summary>The object's Last-Modified as the bucket states it, as an HTTP date.</summary>
    private async Task<string> ListedLastModifiedAsync(string bucket, string key)
    {
        var listing = await rgw.Client.ListObjectsV2Async(new Amazon.S3.Model.ListObjectsV2Request { BucketName = bucket, Prefix = key });
        var time = Assert.Single(listing.S3Objects).LastModified!.Value.ToUniversalTime();
        return new DateTimeOffset(time.Ticks - (time.Ticks % TimeSpan.TicksPerSecond), TimeSpan.Zero).ToString("r");
    }

    private static async Task<(string ETag, string LastModified)> ValidatorsAsync(BucketHost host, string path)
    {
        using var response = await host.Client.GetAsync(path);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        return (response.Headers.ETag!.ToString(), response.Content.Headers.GetValues("Last-Modified").Single());
    }

    private static async Task<HttpStatusCode> ConditionalAsync(BucketHost host, string path, Action<HttpRequestMessage> condition)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        condition(request);
        using var response = await host.Client.SendAsync(request);
        return response.StatusCode;
    }

    /// <summary>The file's device and inode, by stat(1): one for every link to the same file.</summary>
    private static string Node(string path)
    {
        using var stat = Process.Start(new ProcessStartInfo("stat", ["-c", "%d:%i", path]) { RedirectStandardOutput = true, UseShellExecute = false })!;
        var node = stat.StandardOutput.ReadToEnd().Trim();
        Assert.True(stat.WaitForExit(10_000), "stat(1) answered");
        Assert.Equal(0, stat.ExitCode);
        return node;
    }
}
