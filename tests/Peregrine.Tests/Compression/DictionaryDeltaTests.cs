using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Tests.Http1;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Compression dictionaries (RFC 9842) end to end on a real Kestrel: a fingerprinted asset is
/// marked Use-As-Dictionary, and a client holding an earlier version gets the new one as dcz,
/// which the zstd command decodes against the earlier bytes.
/// </summary>
public sealed class DictionaryDeltaTests
{
    internal const string OldPath = "/assets/app-0a1b2c3d.js";
    internal const string NewPath = "/assets/app-4e5f6a7b.js";
    private const string Browser = "gzip, deflate, br, zstd, dcb, dcz";

    private static readonly byte[] s_old = Script(1);
    private static readonly byte[] s_new = Script(2);

    [ZstdFact]
    public async Task FingerprintedAsset_CarriesUseAsDictionaryAndVary()
    {
        using var tree = TwoVersions();
        tree.Write("plain.js", Encoding.UTF8.GetString(s_new));
        await using var host = await StartAsync(tree);

        using var asset = await host.Client.GetAsync(NewPath);
        using var plain = await host.Client.GetAsync("/plain.js");

        Assert.Equal("match=\"/assets/app-*.js\"", Single(asset, "Use-As-Dictionary"));
        Assert.Equal(["Accept-Encoding", "Available-Dictionary"], asset.Headers.Vary);
        Assert.False(plain.Headers.Contains("Use-As-Dictionary"));
        Assert.Equal(["Accept-Encoding"], plain.Headers.Vary);
    }

    [ZstdFact]
    public async Task DczBody_DecodedByTheZstdCommandAgainstTheOldVersion_IsTheNewVersion()
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);

        using var response = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));
        var body = await response.Content.ReadAsByteArrayAsync();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
        Assert.Equal(["Accept-Encoding", "Available-Dictionary"], response.Headers.Vary);
        Assert.Equal("match=\"/assets/app-*.js\"", Single(response, "Use-As-Dictionary"));
        Assert.Equal(body.Length, response.Content.Headers.ContentLength);
        Assert.Equal([0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00], body[..8]);
        Assert.Equal(SHA256.HashData(s_old), body[8..40]);
        Assert.Equal(s_new, ZstdCli(tree, body, s_old));
        Assert.True(body.Length * 5 < (await OrdinaryAsync(host, NewPath)).Length, $"dcz {body.Length} B is not much smaller than br");
    }

    [ZstdTheory]
    [InlineData("wrong hash", Browser)]
    [InlineData("no dcz", "gzip, br, zstd")]
    [InlineData("dcz refused", "gzip, br, zstd, dcz;q=0")]
    [InlineData("own hash", Browser)]
    public async Task DictionaryRequest_ThatCannotBeUsed_GetsTheOrdinaryCoding(string @case, string acceptEncoding)
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);
        var hash = @case switch
        {
            "wrong hash" => Hash(Encoding.UTF8.GetBytes("some other dictionary")),
            "own hash" => Hash(s_new),
            _ => Hash(s_old),
        };

        using var response = await SendAsync(host, HttpMethod.Get, NewPath, hash, acceptEncoding);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("br", response.Content.Headers.ContentEncoding.Single());
        Assert.Equal(["Accept-Encoding", "Available-Dictionary"], response.Headers.Vary);
    }

    [ZstdTheory]
    [InlineData("cross-site", "no-cors", null, false)]
    [InlineData("cross-site", "cors", "https://elsewhere.example", false)]
    [InlineData("same-origin", "no-cors", null, true)]
    [InlineData("same-site", "navigate", null, true)]
    [InlineData(null, null, null, true)]
    public async Task FetchMetadata_GatesTheDelta(string? site, string? mode, string? origin, bool delta)
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);

        using var request = Request(HttpMethod.Get, NewPath, Hash(s_old), Browser, site: null);
        if (site is not null)
        {
            request.Headers.TryAddWithoutValidation("Sec-Fetch-Site", site);
        }

        if (mode is not null)
        {
            request.Headers.TryAddWithoutValidation("Sec-Fetch-Mode", mode);
        }

        if (origin is not null)
        {
            request.Headers.TryAddWithoutValidation("Origin", origin);
        }

        using var response = await host.Client.SendAsync(request);

        Assert.Equal(delta ? "dcz" : "br", response.Content.Headers.ContentEncoding.Single());
    }

    [ZstdFact]
    public async Task NotModified_ForTheDelta_ComparesItsOwnTagAndVaries()
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);

        using var first = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));
        var tag = first.Headers.ETag!.Tag;
        using var again = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old), ifNoneMatch: tag);
        using var ordinary = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old), "gzip, br", ifNoneMatch: tag);

        Assert.Equal("dcz", first.Content.Headers.ContentEncoding.Single());
        Assert.Equal(HttpStatusCode.NotModified, again.StatusCode);
        Assert.Equal(tag, again.Headers.ETag!.Tag);
        Assert.Equal(["Accept-Encoding", "Available-Dictionary"], again.Headers.Vary);
        Assert.Equal("match=\"/assets/app-*.js\"", Single(again, "Use-As-Dictionary"));
        Assert.Equal(HttpStatusCode.OK, ordinary.StatusCode);
        Assert.NotEqual(tag, ordinary.Headers.ETag!.Tag);
    }

    [ZstdFact]
    public async Task Head_WithADictionary_HasTheDeltaFieldsAndNoBody()
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);

        using var get = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));
        var length = (await get.Content.ReadAsByteArrayAsync()).Length;
        using var head = await SendAsync(host, HttpMethod.Head, NewPath, Hash(s_old));

        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
        Assert.Equal("dcz", head.Content.Headers.ContentEncoding.Single());
        Assert.Equal(length, head.Content.Headers.ContentLength);
        Assert.Equal(get.Headers.ETag, head.Headers.ETag);
        Assert.Empty(await head.Content.ReadAsByteArrayAsync());
    }

    [ZstdFact]
    public async Task Range_WithADictionary_IsARangeOfTheOrdinaryRepresentation()
    {
        using var tree = TwoVersions();
        await using var host = await StartAsync(tree);

        using var request = Request(HttpMethod.Get, NewPath, Hash(s_old), "identity, dcz");
        request.Headers.Range = new RangeHeaderValue(0, 9);
        using var response = await host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Empty(response.Content.Headers.ContentEncoding);
        Assert.Equal(s_new[..10], await response.Content.ReadAsByteArrayAsync());
    }

    [ZstdTheory]
    [InlineData("dcz", true)]
    [InlineData("br", false)]
    [InlineData("304", false)]
    [InlineData("head", false)]
    public async Task FastPath_AnswersAsTheMiddleware_AndHandsOnOnlyWhatNamesDcz(string @case, bool handedOff)
    {
        using var tree = TwoVersions();
        await using var plain = await StartAsync(tree);
        var recorder = new HandOffRecorder();
        await using var fast = await StartAsync(tree, fastPath: true, behindFastPath: recorder.Install);
        using var ordinary = await SendAsync(plain, HttpMethod.Get, NewPath, null, "br");
        var method = @case == "head" ? "HEAD" : "GET";
        var fields = @case switch
        {
            "dcz" => $"Accept-Encoding: {Browser}\r\nAvailable-Dictionary: {Hash(s_old)}\r\nSec-Fetch-Site: same-origin\r\n",
            "304" => $"Accept-Encoding: br\r\nIf-None-Match: {ordinary.Headers.ETag!.Tag}\r\n",
            _ => "Accept-Encoding: br\r\n",
        };
        var request = $"{method} {NewPath} HTTP/1.1\r\nHost: x\r\n{fields}Connection: close\r\n\r\n";

        var fromPlain = FastPathDifferentialTests.Normalise(await FastPathDifferentialTests.ExchangeAsync(plain, request));
        var (raw, port) = await FastPathDifferentialTests.ExchangeWithPortAsync(fast, request);
        var fromFast = FastPathDifferentialTests.Normalise(raw);

        Assert.Equal(fromPlain, fromFast);
        Assert.Contains("Vary: Accept-Encoding, Available-Dictionary", fromFast);
        Assert.Contains("Use-As-Dictionary: match=\"/assets/app-*.js\"", fromFast);
        Assert.Equal(handedOff, recorder.TakeHandedOff(port));
        if (@case == "dcz")
        {
            Assert.Contains("Content-Encoding: dcz", fromFast);
        }
    }

    [Fact]
    public async Task Disabled_NoUseAsDictionaryAndNoDelta()
    {
        using var tree = TwoVersions();
        await using var host = await PeregrineHost.StartAsync(tree.Root, o => o.Compression.Dictionaries.Enabled = false);
        await host.Services.GetRequiredService<Peregrine.Compression.Compressor>().WhenIdle();

        using var response = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));

        Assert.False(response.Headers.Contains("Use-As-Dictionary"));
        Assert.Equal(["Accept-Encoding"], response.Headers.Vary);
        Assert.Equal("br", response.Content.Headers.ContentEncoding.Single());
    }

    [ZstdFact]
    [Trait("Category", "Live")]
    public async Task LiveUpdate_OldVersionReplaced_IsKeptAndTheNewOneIsSentAgainstIt()
    {
        using var tree = new TempTree();
        tree.Write(OldPath[1..], s_old);
        await using var host = await StartAsync(tree, wanted: null);
        using var before = await host.Client.GetAsync(OldPath);
        Assert.Equal("match=\"/assets/app-*.js\"", Single(before, "Use-As-Dictionary"));

        // A release: the new bundle written, the old one deleted.
        tree.Write(NewPath[1..], s_new);
        File.Delete(Path.Combine(tree.Root, OldPath[1..]));
        await WaitForDeltasAsync(host, NewPath, gone: OldPath);

        using var response = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));
        using var old = await host.Client.GetAsync(OldPath);

        Assert.Equal(HttpStatusCode.NotFound, old.StatusCode);
        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
        Assert.Equal(s_new, ZstdCli(tree, await response.Content.ReadAsByteArrayAsync(), s_old));
    }

    [ZstdFact]
    public async Task FilesServedFromDisk_AreKeptAndSentAsDeltasToo()
    {
        using var tree = TwoVersions();
        await using var host = await PeregrineHost.StartAsync(tree.Root, o => o.MaxCachedFileSize = 1024);
        await WaitForDeltasAsync(host, NewPath, gone: null);
        Assert.True(host.Services.GetRequiredService<FileCatalog>().Current!.TryFind(NewPath, out var entry) && entry.Identity.Content is null);

        using var response = await SendAsync(host, HttpMethod.Get, NewPath, Hash(s_old));

        Assert.Equal("dcz", response.Content.Headers.ContentEncoding.Single());
        Assert.Equal(s_new, ZstdCli(tree, await response.Content.ReadAsByteArrayAsync(), s_old));
    }

    [ZstdFact]
    public async Task OldBuildsLeftInTheFolder_OnlyTheNewestKeptVersionsGetDeltas()
    {
        using var tree = new TempTree();
        var paths = new List<string>();
        for (var i = 1; i <= 5; i++)
        {
            var path = $"/assets/app-{i}a{i}b{i}c{i}d.js";
            var file = tree.Write(path[1..], Script(i));
            File.SetLastWriteTimeUtc(file, DateTime.UtcNow.AddDays(i - 10));
            paths.Add(path);
        }

        await using var host = await PeregrineHost.StartAsync(tree.Root, o => o.Compression.Dictionaries.MaxVersions = 2);
        await WaitForDeltasAsync(host, paths[^1], gone: null);
        await host.Services.GetRequiredService<Peregrine.Compression.Compressor>().Deltas!.WhenIdle();
        var snapshot = host.Services.GetRequiredService<FileCatalog>().Current!;

        int Deltas(string path) => snapshot.TryFind(path, out var entry) ? entry.Deltas?.Count ?? 0 : -1;
        Assert.Equal([0, 0, 0, 1, 1], paths.Select(Deltas));
        Assert.Equal((2, (long)(Script(4).Length + Script(5).Length)), host.Services.GetRequiredService<Peregrine.Compression.Compressor>().Deltas!.Kept);
    }

    private static TempTree TwoVersions()
    {
        var tree = new TempTree();
        var old = tree.Write(OldPath[1..], s_old);
        File.SetLastWriteTimeUtc(old, DateTime.UtcNow.AddDays(-30));
        tree.Write(NewPath[1..], s_new);
        return tree;
    }

    private static async Task<PeregrineHost> StartAsync(TempTree tree, bool fastPath = false, string? wanted = NewPath, Action<Microsoft.AspNetCore.Server.Kestrel.Core.ListenOptions>? behindFastPath = null)
    {
        var host = await PeregrineHost.StartAsync(tree.Root, fastPath: fastPath, behindFastPath: behindFastPath);
        await host.Services.GetRequiredService<Peregrine.Compression.Compressor>().WhenIdle();
        if (wanted is not null)
        {
            await WaitForDeltasAsync(host, wanted, gone: null);
        }

        return host;
    }

    internal static async Task WaitForDeltasAsync(PeregrineHost host, string path, string? gone)
    {
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        var clock = Stopwatch.StartNew();
        while (true)
        {
            var snapshot = catalog.Current;
            if (snapshot is not null && snapshot.TryFind(path, out var entry) && entry.Deltas is not null
                && entry.Encoded is not null && (gone is null || !snapshot.TryFind(gone, out _)))
            {
                return;
            }

            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(20), $"no deltas for {path} after {clock.Elapsed}");
            await Task.Delay(20);
        }
    }

    internal static HttpRequestMessage Request(HttpMethod method, string path, string? hash, string acceptEncoding, string? site = "same-origin", string? ifNoneMatch = null)
    {
        var request = new HttpRequestMessage(method, path);
        request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        if (hash is not null)
        {
            request.Headers.TryAddWithoutValidation("Available-Dictionary", hash);
        }

        if (site is not null)
        {
            request.Headers.TryAddWithoutValidation("Sec-Fetch-Site", site);
            request.Headers.TryAddWithoutValidation("Sec-Fetch-Mode", "no-cors");
        }

        if (ifNoneMatch is not null)
        {
            request.Headers.TryAddWithoutValidation("If-None-Match", ifNoneMatch);
        }

        return request;
    }

    internal static Task<HttpResponseMessage> SendAsync(PeregrineHost host, HttpMethod method, string path, string? hash, string acceptEncoding = Browser, string? ifNoneMatch = null)
        => host.Client.SendAsync(Request(method, path, hash, acceptEncoding, ifNoneMatch: ifNoneMatch));

    private static async Task<byte[]> OrdinaryAsync(PeregrineHost host, string path)
    {
        using var response = await SendAsync(host, HttpMethod.Get, path, null, "gzip, br, zstd");
        return await response.Content.ReadAsByteArrayAsync();
    }

    internal static string Hash(byte[] dictionary) => ":" + Convert.ToBase64String(SHA256.HashData(dictionary)) + ":";

    private static string? Single(HttpResponseMessage response, string name)
        => response.Headers.TryGetValues(name, out var values) ? values.Single() : null;

    /// <summary>Debian's zstd command, as an independent decoder: it skips the 40-byte header (a skippable frame) itself.</summary>
    internal static byte[] ZstdCli(TempTree tree, byte[] dcz, byte[] dictionary)
    {
        var folder = tree.Root + "-zstd";
        Directory.CreateDirectory(folder);
        try
        {
            var dictionaryPath = Path.Combine(folder, "old.js");
            var bodyPath = Path.Combine(folder, "new.js.dcz");
            File.WriteAllBytes(dictionaryPath, dictionary);
            File.WriteAllBytes(bodyPath, dcz);
            using var zstd = Process.Start(new ProcessStartInfo("zstd", ["-d", "-q", "-c", "-D", dictionaryPath, bodyPath]) { RedirectStandardOutput = true })!;
            using var output = new MemoryStream();
            zstd.StandardOutput.BaseStream.CopyTo(output);
            Assert.True(zstd.WaitForExit(TimeSpan.FromSeconds(20)), "zstd did not finish");
            Assert.Equal(0, zstd.ExitCode);
            return output.ToArray();
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }

    /// <summary>About 40 KB of script; versions differ in a few places, as two releases of a bundle do.</summary>
    internal static byte[] Script(int version)
    {
        var text = new StringBuilder();
        var random = new Random(7);
        for (var i = 0; i < 600; i++)
        {
            var name = "f" + random.Next(100_000).ToString("x", System.Globalization.CultureInfo.InvariantCulture);
            var changed = version > 1 && i % 97 == 0 ? "/* changed in v" + version + " */" : "";
            text.Append("export function ").Append(name).Append("(a, b) { return a * ").Append(random.Next(1000)).Append(" + b; }").Append(changed).Append('\n');
        }

        return Encoding.UTF8.GetBytes(text.ToString());
    }
}
