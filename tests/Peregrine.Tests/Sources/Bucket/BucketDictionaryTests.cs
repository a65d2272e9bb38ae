using System.Diagnostics;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Tests.Compression;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// Compression dictionaries across the replicas of one bucket: the kept versions come from the
/// bucket's releases, not from what each replica saw, so a replica started after a release
/// makes the same delta, byte for byte and with the same ETag, as one that followed it.
/// </summary>
[Collection(CephCollection.Name)]
public sealed class BucketDictionaryTests(CephRgw rgw)
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [CephFact(AndZstd = true)]
    public async Task TwoReplicas_DictionaryFromOne_DeltaFromTheOther_SameBytesAndDecodes()
    {
        var old = DictionaryDeltaTests.Script(1);
        var @new = DictionaryDeltaTests.Script(2);
        var bucket = await rgw.NewBucketAsync();
        await rgw.PutAsync(bucket, "site/releases/r1/index.html", "page r1");
        await rgw.PutAsync(bucket, "site/releases/r1" + DictionaryDeltaTests.OldPath, old);
        await rgw.PutAsync(bucket, "site/current", "r1");

        // Replica A serves r1; the browser takes the old bundle from it as its dictionary.
        await using var a = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/site", b => b.Pointer = "current");
        await BucketHost.EventuallyAsync(async () => await a.TextAsync("/index.html") == "page r1", s_bound, "A serving r1");
        using (var first = await a.Client.GetAsync(DictionaryDeltaTests.OldPath))
        {
            Assert.Equal("match=\"/assets/app-*.js\"", first.Headers.GetValues("Use-As-Dictionary").Single());
            Assert.Equal(old, await first.Content.ReadAsByteArrayAsync());
        }

        // A deploy: r2 has the new bundle under a new name, and not the old one.
        await rgw.PutAsync(bucket, "site/releases/r2/index.html", "page r2");
        await rgw.PutAsync(bucket, "site/releases/r2" + DictionaryDeltaTests.NewPath, @new);
        await rgw.PutAsync(bucket, "site/current", "r2");
        await BucketHost.EventuallyAsync(async () => await a.TextAsync("/index.html") == "page r2", s_bound, "A serving r2");

        // Replica B starts only now: it never served r1.
        await using var b = await BucketHost.StartAsync(rgw.Endpoint, $"s3://{bucket}/site", o => o.Pointer = "current");
        await BucketHost.EventuallyAsync(async () => await b.TextAsync("/index.html") == "page r2", s_bound, "B serving r2");
        await WaitForDeltaAsync(a);
        await WaitForDeltaAsync(b);

        var (fromA, tagA) = await DeltaAsync(a, old);
        var (fromB, tagB) = await DeltaAsync(b, old);

        Assert.Equal(fromA, fromB);
        Assert.Equal(tagA, tagB);
        using var tree = new TempTree();
        Assert.Equal(@new, DictionaryDeltaTests.ZstdCli(tree, fromB, old));
        Assert.Equal(b.Services.GetRequiredService<Compressor>().Deltas!.Kept, a.Services.GetRequiredService<Compressor>().Deltas!.Kept);
    }

    private static async Task<(byte[] Body, string? ETag)> DeltaAsync(BucketHost host, byte[] dictionary)
    {
        using var request = DictionaryDeltaTests.Request(HttpMethod.Get, DictionaryDeltaTests.NewPath, DictionaryDeltaTests.Hash(dictionary), "gzip, br, zstd, dcb, dcz");
        using var response = await host.Client.SendAsync(request);
        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
        return (await response.Content.ReadAsByteArrayAsync(), response.Headers.ETag?.Tag);
    }

    private static async Task WaitForDeltaAsync(BucketHost host)
    {
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        var deltas = host.Services.GetRequiredService<Compressor>().Deltas!;
        var clock = Stopwatch.StartNew();
        while (true)
        {
            await deltas.WhenIdle();
            if (catalog.Current is { } snapshot && snapshot.TryFind(DictionaryDeltaTests.NewPath, out var entry) && entry.Deltas is not null && entry.Encoded is not null)
            {
                return;
            }

            Assert.True(clock.Elapsed < s_bound, $"no delta for {DictionaryDeltaTests.NewPath} after {clock.Elapsed}");
            await Task.Delay(50);
        }
    }
}
