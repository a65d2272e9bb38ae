using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;
using static Peregrine.Tests.Compression.DictionaryDeltaTests;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Kept versions saved in the compression cache folder (<see cref="KeptVersionStore"/>): a
/// restart followed by a deploy still sends the new version as a delta against the one served
/// before the restart; damaged data is left out with a log line; two servers of one site keep
/// a folder each.
/// </summary>
public sealed class KeptVersionStoreTests : IDisposable
{
    private readonly TempTree _tree = new();
    private readonly string _cache;

    public KeptVersionStoreTests()
    {
        _cache = _tree.Root + "-cache";
    }

    [ZstdFact]
    public async Task RestartThenDeploy_VersionServedBeforeTheRestart_GetsADelta()
    {
        var old = Script(1);
        var @new = Script(2);
        _tree.Write(OldPath[1..], old);
        await using (var first = await StartAsync())
        {
            var deltas = first.Services.GetRequiredService<Compressor>().Deltas!;
            await deltas.WhenIdle();
            Assert.Equal(1, deltas.Kept.Versions);
        }

        // The deploy comes while the server is down: the old bundle is gone from the folder.
        File.Delete(Path.Combine(_tree.Root, OldPath[1..]));
        _tree.Write(NewPath[1..], @new);
        await using var second = await StartAsync();
        await WaitForDeltasAsync(second, NewPath, gone: OldPath);

        using var response = await SendAsync(second, HttpMethod.Get, NewPath, Hash(old));

        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
        Assert.Equal(@new, ZstdCli(_tree, await response.Content.ReadAsByteArrayAsync(), old));
    }

    [ZstdFact]
    public async Task DamagedStore_IsLeftOutWithALogLine_AndTheSiteIsServed()
    {
        var old = Script(1);
        _tree.Write(NewPath[1..], Script(2));
        var key = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root });
        var folder = Path.Combine(_cache, "dictionaries", key + ".0");
        Directory.CreateDirectory(folder);
        var good = Convert.ToHexStringLower(SHA256.HashData(old));
        var tampered = Convert.ToHexStringLower(SHA256.HashData(Script(3)));
        File.WriteAllBytes(Path.Combine(folder, good + ".bin"), old);
        File.WriteAllBytes(Path.Combine(folder, tampered + ".bin"), old);
        File.WriteAllText(Path.Combine(folder, "kept.v1"), string.Join('\n',
            "not a line at all",
            tampered + " /assets/app-*.js",
            new string('a', 64) + " /assets/app-*.js",
            good + " assets/no-slash-*.js",
            good + " /assets/app-*.js") + '\n');
        var logger = new CapturingLogger();

        using (var store = KeptVersionStore.Open(_cache, key, logger)!)
        {
            var loaded = store.Load(maxBytes: 1 << 20);

            Assert.Equal(["/assets/app-*.js"], loaded.Select(v => v.Match));
            Assert.Equal(old, loaded.Single().Content);
            Assert.Equal(4, logger.Count(38));
        }

        // Served as ever, with the one good version as the dictionary.
        await using var host = await StartAsync();
        await WaitForDeltasAsync(host, NewPath, gone: null);
        using var response = await SendAsync(host, HttpMethod.Get, NewPath, Hash(old));
        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
    }

    [Fact]
    public void GarbageList_LoadsNothing_WithALogLinePerLine()
    {
        var key = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root });
        var logger = new CapturingLogger();
        using var store = KeptVersionStore.Open(_cache, key, logger)!;
        var garbage = new byte[600];
        new Random(3).NextBytes(garbage);
        garbage = garbage.Select(b => b >= 32 ? b : (byte)'x').ToArray();
        garbage[200] = garbage[400] = garbage[^1] = (byte)'\n';
        File.WriteAllBytes(Path.Combine(store.Folder, "kept.v1"), garbage);

        Assert.Empty(store.Load(maxBytes: 1 << 20));
        Assert.Equal(3, logger.Count(38));
    }

    [Fact]
    public void TwoServersOfOneSite_WriteAFolderEach_AndAThirdReadsTheNewest()
    {
        var key = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root });
        var logger = new CapturingLogger();
        var kept = new KeptVersions(new DictionaryOptions(), new MemoryBudget(1 << 30));
        kept.Keep("/a-*.js", SHA256.HashData("one"u8), "one"u8.ToArray());

        using var first = KeptVersionStore.Open(_cache, key, logger)!;
        using var second = KeptVersionStore.Open(_cache, key, logger)!;
        Assert.NotEqual(first.Folder, second.Folder);

        first.Save(kept.OldestFirst);
        kept.Keep("/a-*.js", SHA256.HashData("two"u8), "two"u8.ToArray());
        File.SetLastWriteTimeUtc(Path.Combine(first.Folder, "kept.v1"), DateTime.UtcNow.AddMinutes(-1));
        second.Save(kept.OldestFirst);

        // The first wrote only its own folder; the second's list is the one read.
        Assert.Equal(2, Directory.GetFiles(first.Folder).Length);
        using var third = KeptVersionStore.Open(_cache, key, logger)!;
        Assert.Equal(["one", "two"], third.Load(maxBytes: 1 << 20).Select(v => Encoding.UTF8.GetString(v.Content)));
        Assert.Equal(0, logger.Count(39));
    }

    [Fact]
    public void OtherSites_HaveOtherKeys()
    {
        var one = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root });
        var mounted = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root, RequestPath = "/app" });
        var other = KeptVersionStore.KeyFor(new PeregrineOptions { Root = _tree.Root + "-other" });

        Assert.Equal(3, new[] { one, mounted, other }.Distinct().Count());
    }

    public void Dispose()
    {
        _tree.Dispose();
        if (Directory.Exists(_cache))
        {
            Directory.Delete(_cache, recursive: true);
        }
    }

    private async Task<PeregrineHost> StartAsync()
    {
        var host = await PeregrineHost.StartAsync(_tree.Root, o => o.Compression.CacheDirectory = _cache);
        await host.Services.GetRequiredService<Compressor>().WhenIdle();
        return host;
    }
}
