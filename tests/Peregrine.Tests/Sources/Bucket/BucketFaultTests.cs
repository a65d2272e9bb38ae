using System.Net;
using System.Text.Json;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// Faults between a replica and its bucket: in none is anything served wrong. The bucket is
/// reached through <see cref="S3Forwarder"/>, which can be closed (unreachable), answer 503
/// SlowDown or 500, or hold a request back.
/// </summary>
[Collection(CephCollection.Name)]
public sealed class BucketFaultTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [CephFact]
    public async Task UnreachableAtStart_503ThenServesOnceReachable()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "s/index.html", "hello");
        await using var forwarder = new S3Forwarder(rgw.Endpoint);
        forwarder.Close();
        await using var host = await BucketHost.StartAsync(forwarder.Endpoint, $"s3://{bucket}/s");

        await BucketHost.EventuallyAsync(async () => (await host.HealthAsync()).Bucket.GetProperty("error").ValueKind == JsonValueKind.String, s_bound, "the failure in /healthz");
        Assert.Equal("<503>", await host.TextAsync("/index.html"));
        Assert.Equal(HttpStatusCode.ServiceUnavailable, (await host.HealthAsync()).Status);

        forwarder.Open();
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "hello", s_bound, "served once the bucket is reachable");
        var (status, state) = await host.HealthAsync();
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.True(state.GetProperty("reachable").GetBoolean());
    }

    [CephFact]
    public async Task UnreachableLater_KeepsServingAndSaysSo_ThenCatchesUp()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "s/index.html", "one");
        await rgw.PutAsync(bucket, "s/app.js", "js one");
        await using var forwarder = new S3Forwarder(rgw.Endpoint);
        await using var host = await BucketHost.StartAsync(forwarder.Endpoint, $"s3://{bucket}/s");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "one", s_bound, "the first copy served");

        forwarder.Close();
        await rgw.PutAsync(bucket, "s/index.html", "two");
        await rgw.PutAsync(bucket, "s/app.js", "js two");
        await BucketHost.EventuallyAsync(async () => !(await host.HealthAsync()).Bucket.GetProperty("reachable").GetBoolean(), s_bound, "/healthz says the bucket is unreachable");
        var (status, state) = await host.HealthAsync();
        Assert.Equal(HttpStatusCode.OK, status);
        Assert.Equal(JsonValueKind.String, state.GetProperty("failingSince").ValueKind);
        for (var i = 0; i < 20; i++)
        {
            Assert.Equal("one", await host.TextAsync("/index.html"));
            Assert.Equal("js one", await host.TextAsync("/app.js"));
        }

        forwarder.Open();
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/index.html") == "two", s_bound, "the change picked up once reachable");
        Assert.Equal("js two", await host.TextAsync("/app.js"));
        Assert.True((await host.HealthAsync()).Bucket.GetProperty("reachable").GetBoolean());
    }

    [CephFact]
    public async Task ObjectReplacedBetweenListAndGet_EveryTime_OldVersionKeptWhole()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "s/a.txt", "a1");
        await rgw.PutAsync(bucket, "s/b.txt", "b1");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/s");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/b.txt") == "b1", s_bound, "the first copy served");

        // Each time b.txt is about to be fetched it is replaced, so the ETag listed is never the
        // one there: the sync relists once, then fails, and a.txt must not move on alone.
        var replaced = 0;
        host.Source.Sync.BeforeDownload = async (item, token) =>
        {
            if (item.RelativePath == "b.txt")
            {
                await rgw.PutAsync(bucket, "s/b.txt", "b-racing-" + Interlocked.Increment(ref replaced));
            }
        };
        // b first: a poll between the two uploads then fails on b as well, rather than taking a2 alone.
        await rgw.PutAsync(bucket, "s/b.txt", "b2");
        await rgw.PutAsync(bucket, "s/a.txt", "a2");
        await BucketHost.EventuallyAsync(async () => (await host.HealthAsync()).Bucket.GetProperty("error").ValueKind == JsonValueKind.String, s_bound, "the failed sync in /healthz");
        Assert.True(replaced >= 2, "listed, replaced, listed again, replaced again");
        Assert.Equal("a1", await host.TextAsync("/a.txt"));
        Assert.Equal("b1", await host.TextAsync("/b.txt"));

        host.Source.Sync.BeforeDownload = null;
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/a.txt") == "a2", s_bound, "the next sync succeeds");
        Assert.StartsWith("b-racing-", await host.TextAsync("/b.txt"));
    }

    [CephFact]
    public async Task ObjectDeletedBetweenListAndGet_Relisted_SiteAsTheBucketHoldsIt()
    {
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "s/a.txt", "a1");
        await using var host = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/s");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/a.txt") == "a1", s_bound, "the first copy served");

        var deleted = 0;
        host.Source.Sync.BeforeDownload = async (item, token) =>
        {
            if (item.RelativePath == "gone.txt" && Interlocked.Increment(ref deleted) == 1)
            {
                await rgw.DeleteAsync(bucket, "s/gone.txt");
            }
        };
        await rgw.PutAsync(bucket, "s/gone.txt", "soon gone");
        await rgw.PutAsync(bucket, "s/a.txt", "a2");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/a.txt") == "a2", s_bound, "the relisted release served");
        Assert.Equal(1, deleted);
        Assert.Equal("<404>", await host.TextAsync("/gone.txt"));
    }

    [CephFact]
    public async Task SlowDownAnd5xxAndSlowGets_DuringTheCopy_EveryFileRight()
    {
        var bucket = await rgw.NewBucketAsync();
        var files = Enumerable.Range(0, 60).ToDictionary(i => $"f/{i}.txt", i => $"content {i} " + new string('x', i * 100));
        foreach (var (path, text) in files)
        {
            await rgw.PutAsync(bucket, "s/" + path, text);
        }

        await using var forwarder = new S3Forwarder(rgw.Endpoint);

        // Throttled from the first request: the listing and the first downloads back off.
        forwarder.FailNext(3, 503, "SlowDown");
        await using var host = await BucketHost.StartAsync(forwarder.Endpoint, $"s3://{bucket}/s", b => b.Downloads = 4);
        await BucketHost.EventuallyAsync(async () => (await host.Client.GetAsync("/healthz")).StatusCode == HttpStatusCode.OK, s_bound, "the first copy indexed");
        Assert.True(forwarder.Refused >= 3, $"{forwarder.Refused} requests throttled");
        foreach (var (path, text) in files)
        {
            Assert.Equal(text, await host.TextAsync("/" + path));
        }

        // A new version met by 500s and held-back downloads on its way in.
        foreach (var (path, text) in files)
        {
            await rgw.PutAsync(bucket, "s/" + path, text + " v2");
        }

        forwarder.DelayNext(2, TimeSpan.FromSeconds(2));
        forwarder.FailNext(4, 500, "InternalError");
        await BucketHost.EventuallyAsync(async () => await host.TextAsync("/f/59.txt") == files["f/59.txt"] + " v2", s_bound, "the new version served");
        foreach (var (path, text) in files)
        {
            Assert.Equal(text + " v2", await host.TextAsync("/" + path));
        }
    }
}
