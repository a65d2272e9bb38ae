using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>A bucket served as the site: the same answers as the same files in a folder, and changes picked up by polling.</summary>
[Collection(CephCollection.Name)]
public sealed class BucketSiteTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(30);

    [CephFact]
    public async Task Bucket_SampleSite_ServesTheFolderBytesAndETags()
    {
        var bucket = await rgw.NewBucketAsync();
        var site = Path.Combine(RepositoryRoot.Path, "samples", "site");
        await rgw.UploadTreeAsync(bucket, "web/", site);

        await using var fromFolder = await PeregrineHost.StartAsync(site);
        await using var fromBucket = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/web");
        await BucketHost.EventuallyAsync(async () => (await fromBucket.Client.GetAsync("/healthz")).StatusCode == HttpStatusCode.OK, s_bound, "the first copy indexed");

        var compared = 0;
        foreach (var file in Directory.EnumerateFiles(site, "*", SearchOption.AllDirectories))
        {
            var path = "/" + string.Join('/', Path.GetRelativePath(site, file).Split(Path.DirectorySeparatorChar).Select(Uri.EscapeDataString));
            using var local = await fromFolder.Client.GetAsync(path);
            using var remote = await fromBucket.Client.GetAsync(path);
            Assert.Equal(local.StatusCode, remote.StatusCode);
            if (local.StatusCode != HttpStatusCode.OK)
            {
                continue;
            }

            var bytes = await remote.Content.ReadAsByteArrayAsync();
            Assert.Equal(await File.ReadAllBytesAsync(file), bytes);
            Assert.Equal(await local.Content.ReadAsByteArrayAsync(), bytes);
            Assert.Equal(local.Headers.ETag, remote.Headers.ETag);
            Assert.Equal(local.Content.Headers.ContentType, remote.Content.Headers.ContentType);
            compared++;
        }

        // Both served files, not two 404s agreeing.
        Assert.True(compared >= 10, $"only {compared} files compared");
    }

    [CephFact]
    public async Task Bucket_ObjectAddedAndChanged_PollingServesIt()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "site/index.html", "one");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/site");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "one", s_bound, "the first copy served");

        await rgw.PutAsync(bucket, "site/index.html", "two");
        await rgw.PutAsync(bucket, "site/new/page.txt", "added");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/new/page.txt") == "added" && await host.TextAsync("/index.html") == "two", s_bound, "the change picked up by polling");

        await rgw.DeleteAsync(bucket, "site/new/page.txt");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/new/page.txt") == "<404>", s_bound, "the deletion picked up by polling");

        // Objects outside the prefix are not the site.
        await rgw.PutAsync(bucket, "elsewhere.txt", "no");
        await rgw.PutAsync(bucket, "site-old/index.html", "no");
        Assert.Equal("<404>", await host.TextAsync("/elsewhere.txt"));
    }

    [CephFact]
    public async Task Bucket_KeysThatCannotBeFiles_AreLeftOutAndTheRestServed()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "s/ok.txt", "fine");
        await rgw.PutAsync(bucket, "s/a/../../escape.txt", "no");
        await rgw.PutAsync(bucket, "s/clash", "file");
        await rgw.PutAsync(bucket, "s/clash/inner.txt", "folder wins");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/s");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/ok.txt") == "fine", s_bound, "the copy served");

        Assert.Equal("folder wins", await host.TextAsync("/clash/inner.txt"));
        Assert.Equal("<404>", await host.TextAsync("/escape.txt"));
    }
}
