using Peregrine.Tests.Compression;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.StaticWebAssets;
using static Peregrine.Tests.Compression.DictionaryDeltaTests;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// Two replicas of one bucket under one origin (a forwarder, as a load balancer would be):
/// headless Chromium takes the bundle as a dictionary from replica A, a release is deployed,
/// and replica B, started after it (and after A stopped), sends the new bundle as dcz, which the
/// browser decodes.
/// </summary>
[Collection(CephCollection.Name)]
public sealed class BucketDictionaryBrowserTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [ChromiumFact(AndCeph = true, AndZstd = true)]
    public async Task TwoReplicas_DictionaryFromA_DeltaFromB_DecodedByTheBrowser()
    {
        var old = Script(1);
        var @new = Script(2);
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "site/releases/r1/index.html", DictionaryBrowserTests.Page(OldPath));
        await rgw.PutAsync(bucket, "site/releases/r1" + OldPath, old);
        await rgw.PutAsync(bucket, "site/current", "r1");
        var a = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/site", b => b.Pointer = "current");
        using var front = new LoopbackForwarder(a.Client.BaseAddress!.Port);
        using var browser = await HeadlessChromium.StartAsync();
        try
        {
            await BucketHost.EventuallyAsync(async () => (await a.Client.GetAsync(OldPath)).IsSuccessStatusCode, s_bound, "A serving r1");
            await DictionaryBrowserTests.FirstVisitAsync(browser, front.Address);
        }
        finally
        {
            // A stops: whatever the second visit gets comes from B.
            await a.DisposeAsync();
        }

        await rgw.PutAsync(bucket, "site/releases/r2/index.html", DictionaryBrowserTests.Page(NewPath));
        await rgw.PutAsync(bucket, "site/releases/r2" + NewPath, @new);
        await rgw.PutAsync(bucket, "site/current", "r2");
        await using var b = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/site", o => o.Pointer = "current");
        await DictionaryBrowserTests.DeltaReadyAsync(b.Client.BaseAddress!, old);
        front.SwitchTo(b.Client.BaseAddress!.Port);

        var seen = await DictionaryBrowserTests.SecondVisitAsync(browser, front.Address);

        DictionaryBrowserTests.AssertDecoded(seen, @new, browser);
    }
}
