using System.Net;
using System.Text;
using System.Text.Json;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>Releases switched by the pointer object, and changes brought by bucket notifications.</summary>
[Collection(CephCollection.Name)]
public sealed class BucketDeployTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(30);

    [CephFact]
    public async Task Pointer_NewRelease_ReaderNeverSeesOldAfterNew()
    {
        var bucket = await rgw.NewBucketAsync();
        await UploadReleaseAsync(bucket, "r1", 300);
        await rgw.PutAsync(bucket, "app/current", "r1\n");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/app", b => b.Pointer = "current");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "page r1", s_bound, "release r1 served");

        // A reader fetches the page and an asset again and again while r2 is uploaded and named.
        using var stop = new CancellationTokenSource();
        var seen = new List<(string Page, string Asset)>();
        var reader = Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                var page = await host.TextAsync("/index.html");
                var asset = await host.TextAsync("/assets/f150.css");
                lock (seen)
                {
                    seen.Add((page, asset));
                }
            }
        });

        await UploadReleaseAsync(bucket, "r2", 300);
        Assert.Equal("page r1", await host.TextAsync("/index.html"));
        await rgw.PutAsync(bucket, "app/current", "r2\n");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/assets/f299.css") == "asset 299 r2", s_bound, "release r2 served");
        await Task.Delay(300);
        stop.Cancel();
        await reader;

        lock (seen)
        {
            var firstNew = seen.FindIndex(pair => pair.Page == "page r2" || pair.Asset == "asset 150 r2");
            Assert.True(firstNew > 0, "the reader saw both releases");
            Assert.All(seen.Take(firstNew), pair => Assert.Equal(("page r1", "asset 150 r1"), pair));

            // The first pair to show r2 may straddle the switch (two requests); none after it shows r1.
            Assert.All(seen.Skip(firstNew + 1), pair => Assert.Equal(("page r2", "asset 150 r2"), pair));
        }

        // A release not named is never served, and the old one's files are gone once replaced.
        Assert.Equal("<404>", await host.TextAsync("/only-in-r1.txt"));
    }

    [CephFact]
    public async Task Notification_Event_SyncsWithoutPolling()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "n/index.html", "one");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/n", b => b.PollInterval = TimeSpan.Zero);
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "one", s_bound, "the first copy served");

        await rgw.PutAsync(bucket, "n/index.html", "two");
        await Task.Delay(1000);
        Assert.Equal("one", await host.TextAsync("/index.html"));

        using var accepted = await host.Client.PostAsync(BucketHost.EventsPath, Event(bucket, "n/index.html"));
        Assert.Equal(HttpStatusCode.Accepted, accepted.StatusCode);
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "two", s_bound, "the notified change served");

        // Events about other buckets or prefixes ask for nothing.
        using var other = await host.Client.PostAsync(BucketHost.EventsPath, Event("another-bucket", "n/index.html"));
        Assert.Equal(HttpStatusCode.NoContent, other.StatusCode);
        using var outside = await host.Client.PostAsync(BucketHost.EventsPath, Event(bucket, "elsewhere/index.html"));
        Assert.Equal(HttpStatusCode.NoContent, outside.StatusCode);
    }

    [CephFact]
    public async Task Pointer_PollingOff_SwitchesOnTheNotificationOfThePointer()
    {
        var bucket = await rgw.NewBucketAsync();
        await UploadReleaseAsync(bucket, "r1", 20);
        await rgw.PutAsync(bucket, "app/current", "r1");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/app", b =>
        {
            b.Pointer = "current";
            b.PollInterval = TimeSpan.Zero;
        });
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "page r1", s_bound, "release r1 served");

        // Named but not notified: with polling off, nothing asks the bucket.
        await UploadReleaseAsync(bucket, "r2", 20);
        await rgw.PutAsync(bucket, "app/current", "r2");
        await Task.Delay(1000);
        Assert.Equal("page r1", await host.TextAsync("/index.html"));

        // The notification a bucket sends for the pointer's write: the release it names is taken whole.
        using var accepted = await host.Client.PostAsync(BucketHost.EventsPath, Event(bucket, "app/current"));
        Assert.Equal(HttpStatusCode.Accepted, accepted.StatusCode);
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "page r2", s_bound, "release r2 served on the notification");
        Assert.Equal("asset 19 r2", await host.TextAsync("/assets/f19.css"));
        Assert.Equal("<404>", await host.TextAsync("/only-in-r1.txt"));
    }

    /// <summary>An S3 event notification as Ceph RGW and S3 post it.</summary>
    internal static StringContent Event(string bucket, string key) => new(
        "{\"Records\":[{\"eventVersion\":\"2.2\",\"eventSource\":\"ceph:s3\",\"eventName\":\"ObjectCreated:Put\",\"s3\":{\"bucket\":{\"name\":\"" + JsonEncodedText.Encode(bucket) + "\"},\"object\":{\"key\":\"" + JsonEncodedText.Encode(key) + "\",\"size\":3}}}]}",
        Encoding.UTF8,
        "application/json");

    private async Task UploadReleaseAsync(string bucket, string release, int assets)
    {
        var prefix = $"app/releases/{release}/";
        await rgw.PutAsync(bucket, prefix + "index.html", "page " + release);
        if (release == "r1")
        {
            await rgw.PutAsync(bucket, prefix + "only-in-r1.txt", "old");
        }

        await Parallel.ForEachAsync(Enumerable.Range(0, assets), new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (i, _) =>
            await rgw.PutAsync(bucket, $"{prefix}assets/f{i}.css", $"asset {i} {release}"));
    }
}
