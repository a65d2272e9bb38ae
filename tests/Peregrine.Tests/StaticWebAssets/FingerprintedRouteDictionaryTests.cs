using System.IO.Compression;
using System.Net;
using System.Security.Cryptography;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;
using static Peregrine.Tests.Compression.DictionaryDeltaTests;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Compression dictionaries (RFC 9842) on the static web assets' fingerprinted routes: the route
/// the endpoints manifest says is fingerprinted (<c>/js/app.{fingerprint}.js</c>) announces
/// <c>Use-As-Dictionary</c> for its later builds, the file's own route (<c>/js/app.js</c>,
/// <c>no-cache</c>) does not, a client without a dictionary still gets the manifest's br, and a
/// later build's fingerprinted route, after a restart on the same cache folder, sends dcz
/// against the version served before it.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class FingerprintedRouteDictionaryTests : IDisposable
{
    private const string Build1 = "ab12cd34ef";
    private const string Build2 = "zx98wv76ut";

    private readonly TempTree _tree = new();
    private readonly string _cache;

    public FingerprintedRouteDictionaryTests()
    {
        _cache = _tree.Root + "-cache";
    }

    [Theory]
    [InlineData("/css/site.khy4lop6wu.css", "khy4lop6wu", "/css/site.*.css")]
    [InlineData("/_framework/blazor.web.khy4lop6wu.js", "khy4lop6wu", "/_framework/blazor.web.*.js")]
    [InlineData("/_framework/dotnet.khy4lop6wu.js", "khy4lop6wu", "/_framework/dotnet.*.js")]
    [InlineData("/BlazorApp.khy4lop6wu.styles.css", "khy4lop6wu", "/BlazorApp.*.styles.css")]
    [InlineData("/lib/app-khy4lop6wu.js", "khy4lop6wu", "/lib/app-*.js")]
    [InlineData("/css/site.css", "khy4lop6wu", null)]
    [InlineData("/khy4lop6wu.d/site.css", "khy4lop6wu", null)]
    [InlineData("/css/site.khy4lop6wu", "khy4lop6wu", null)]
    [InlineData("/css/sitekhy4lop6wu.css", "khy4lop6wu", null)]
    [InlineData("/css/my site.khy4lop6wu.css", "khy4lop6wu", null)]
    [InlineData("/css/site.khy4lop6wu.css", "", null)]
    public void ForRoute_ReplacesTheManifestsFingerprint_InTheLastSegmentOnly(string route, string fingerprint, string? pattern)
        => Assert.Equal(pattern, DictionaryMatch.ForRoute(route, fingerprint));

    [Fact]
    public void RouteTable_KnowsTheFingerprintFromTheManifest_NotFromTheName()
    {
        var table = Table(Build1, withEncodedRoute: true, withUnmarkedRoute: true);

        var aliases = table.Aliases.ToDictionary(a => a.Path);
        Assert.Equal(Build1, aliases[$"/js/app.{Build1}.js"].Fingerprint);
        Assert.True(table.IsFingerprintedRouteOf(aliases[$"/js/app.{Build1}.js"]));

        // A route that looks fingerprinted but whose manifest entry says nothing of it, and the
        // route of an encoded file, take no part.
        Assert.Null(aliases["/js/other.khy4lop6wu.js"].Fingerprint);
        Assert.Null(table.FingerprintedRouteOf("/js/other.js"));
        Assert.Null(aliases[$"/js/app.{Build1}.js.br"].Fingerprint);
    }

    [Theory]
    [ZstdData(false)]
    [ZstdData(true)]
    public async Task FingerprintedRoute_AnnouncesTheDictionary_AndTheOwnRouteDoesNot(bool fastPath)
    {
        var v1 = Script(1);
        WriteBuild(v1);
        await using var host = await StartAsync(Build1, fastPath);

        using var fingerprinted = await SendAsync(host, HttpMethod.Get, $"/js/app.{Build1}.js", hash: null, acceptEncoding: "br");
        using var own = await SendAsync(host, HttpMethod.Get, "/js/app.js", hash: null, acceptEncoding: "br");
        using var head = await SendAsync(host, HttpMethod.Head, $"/js/app.{Build1}.js", hash: null, acceptEncoding: "br");
        using var notModified = await SendAsync(host, HttpMethod.Get, $"/js/app.{Build1}.js", hash: null, acceptEncoding: "br", ifNoneMatch: StockTag(Brotli(v1)));

        // HEAD and 304 carry the same fields (RFC 9110 §9.3.2, §15.4.5).
        Assert.Equal("match=\"/js/app.*.js\"", Field(head, "Use-As-Dictionary"));
        Assert.Equal(HttpStatusCode.NotModified, notModified.StatusCode);
        Assert.Equal("match=\"/js/app.*.js\"", Field(notModified, "Use-As-Dictionary"));
        Assert.Contains("available-dictionary", Field(notModified, "Vary"), StringComparison.OrdinalIgnoreCase);

        Assert.Equal(HttpStatusCode.OK, fingerprinted.StatusCode);
        Assert.Equal("match=\"/js/app.*.js\"", Field(fingerprinted, "Use-As-Dictionary"));
        Assert.Contains("available-dictionary", Field(fingerprinted, "Vary"), StringComparison.OrdinalIgnoreCase);
        Assert.Equal("max-age=31536000, immutable", Field(fingerprinted, "Cache-Control"));

        // A client without a dictionary gets the build's br, under the tag the manifest states.
        Assert.Equal("br", Field(fingerprinted, "Content-Encoding"));
        Assert.Equal(StockTag(Brotli(v1)), Field(fingerprinted, "ETag"));
        Assert.Equal(Brotli(v1), await fingerprinted.Content.ReadAsByteArrayAsync());

        Assert.Equal(HttpStatusCode.OK, own.StatusCode);
        Assert.Null(Field(own, "Use-As-Dictionary"));
        Assert.Equal("no-cache", Field(own, "Cache-Control"));
        Assert.Equal("br", Field(own, "Content-Encoding"));
    }

    [Theory]
    [ZstdData(false)]
    [ZstdData(true)]
    public async Task RestartOnTheNextBuild_FingerprintedRoute_SendsDczAgainstTheVersionServedBefore(bool fastPath)
    {
        var v1 = Script(1);
        var v2 = Script(2);
        WriteBuild(v1);
        await using (var first = await StartAsync(Build1, fastPath))
        {
            using var served = await SendAsync(first, HttpMethod.Get, $"/js/app.{Build1}.js", hash: null, acceptEncoding: "identity");
            Assert.Equal(v1, await served.Content.ReadAsByteArrayAsync());
            var deltas = first.Services.GetRequiredService<Compressor>().Deltas!;
            await deltas.WhenIdle();
            Assert.Equal(1, deltas.Kept.Versions);
        }

        // The next build replaces the files and the manifest while the app is down.
        WriteBuild(v2);
        await using var second = await StartAsync(Build2, fastPath);
        await WaitForDeltasAsync(second, $"/js/app.{Build2}.js", gone: $"/js/app.{Build1}.js");

        using var delta = await SendAsync(second, HttpMethod.Get, $"/js/app.{Build2}.js", Hash(v1));
        using var own = await SendAsync(second, HttpMethod.Get, "/js/app.js", Hash(v1));

        Assert.Equal(HttpStatusCode.OK, delta.StatusCode);
        Assert.Equal("dcz", delta.Content.Headers.ContentEncoding.Single());
        Assert.Equal("match=\"/js/app.*.js\"", Field(delta, "Use-As-Dictionary"));
        var body = await delta.Content.ReadAsByteArrayAsync();
        Assert.True(body.Length < Brotli(v2).Length, $"dcz {body.Length} B is not smaller than br {Brotli(v2).Length} B");
        Assert.Equal(v2, ZstdCli(_tree, body, v1));

        // The own route is no dictionary's URL: the ordinary coding, never a delta.
        Assert.NotEqual("dcz", own.Content.Headers.ContentEncoding.SingleOrDefault());
        Assert.Null(Field(own, "Use-As-Dictionary"));
    }

    /// <summary>
    /// .NET 10 writes <c>_framework</c>'s assemblies and runtime under names that carry the
    /// fingerprint, and the manifest's fingerprinted route is then the file's own path
    /// (<c>_framework/app.{fingerprint}.wasm</c>, answering with that file): that route announces
    /// the dictionary and sends the delta, and the unfingerprinted route to the same file does not.
    /// </summary>
    [Theory]
    [ZstdData(false)]
    [ZstdData(true)]
    public async Task RestartOnTheNextBuild_FileNamedWithItsFingerprint_SendsDczUnderItsOwnPath(bool fastPath)
    {
        var v1 = Script(1);
        var v2 = Script(2);
        var first = $"_framework/app.{Build1}.wasm";
        var next = $"_framework/app.{Build2}.wasm";
        WriteNamedBuild(first, v1);
        await using (var host = await StartNamedAsync(first, Build1, v1, fastPath))
        {
            using var served = await SendAsync(host, HttpMethod.Get, "/" + first, hash: null, acceptEncoding: "br");
            using var plain = await SendAsync(host, HttpMethod.Get, "/_framework/app.wasm", hash: null, acceptEncoding: "br");

            Assert.Equal(HttpStatusCode.OK, served.StatusCode);
            Assert.Equal("match=\"/_framework/app.*.wasm\"", Field(served, "Use-As-Dictionary"));
            Assert.Contains("available-dictionary", Field(served, "Vary"), StringComparison.OrdinalIgnoreCase);
            Assert.Equal("br", Field(served, "Content-Encoding"));
            Assert.Equal(Brotli(v1), await served.Content.ReadAsByteArrayAsync());
            Assert.Equal(HttpStatusCode.OK, plain.StatusCode);
            Assert.Null(Field(plain, "Use-As-Dictionary"));

            var deltas = host.Services.GetRequiredService<Compressor>().Deltas!;
            await deltas.WhenIdle();
            Assert.Equal(1, deltas.Kept.Versions);
        }

        // The next build: the old name gone, the new one written, while the app is down.
        File.Delete(Path.Combine(_tree.Root, first));
        File.Delete(Path.Combine(_tree.Root, first + ".br"));
        WriteNamedBuild(next, v2);
        await using var second = await StartNamedAsync(next, Build2, v2, fastPath);
        await WaitForDeltasAsync(second, "/" + next, gone: "/" + first);

        using var delta = await SendAsync(second, HttpMethod.Get, "/" + next, Hash(v1));
        using var own = await SendAsync(second, HttpMethod.Get, "/_framework/app.wasm", Hash(v1));

        Assert.Equal(HttpStatusCode.OK, delta.StatusCode);
        Assert.Equal("dcz", delta.Content.Headers.ContentEncoding.Single());
        Assert.Equal("match=\"/_framework/app.*.wasm\"", Field(delta, "Use-As-Dictionary"));
        Assert.Equal(v2, ZstdCli(_tree, await delta.Content.ReadAsByteArrayAsync(), v1));
        Assert.NotEqual("dcz", own.Content.Headers.ContentEncoding.SingleOrDefault());
        Assert.Null(Field(own, "Use-As-Dictionary"));
    }

    public void Dispose()
    {
        _tree.Dispose();
        if (Directory.Exists(_cache))
        {
            Directory.Delete(_cache, recursive: true);
        }
    }

    private void WriteBuild(byte[] script)
    {
        _tree.Write("js/app.js", script);
        _tree.Write("js/app.js.br", Brotli(script));
        _tree.Write("js/other.js", "export const other = 1;\n");
    }

    private async Task<PeregrineHost> StartAsync(string build, bool fastPath)
    {
        var script = File.ReadAllBytes(Path.Combine(_tree.Root, "js", "app.js"));
        var host = await PeregrineHost.StartAsync(
            _tree.Root,
            o =>
            {
                o.Compression.CacheDirectory = _cache;
                o.Routes = Table(build, script: script);
            },
            fastPath: fastPath);
        await host.Services.GetRequiredService<Compressor>().WhenIdle();
        return host;
    }

    private void WriteNamedBuild(string path, byte[] bytes)
    {
        _tree.Write(path, bytes);
        _tree.Write(path + ".br", Brotli(bytes));
    }

    /// <summary>
    /// As publish writes them for a file named with its fingerprint: its own route (the
    /// fingerprint property, its br selector), the unfingerprinted route to it, and the route of
    /// its .br file as it is.
    /// </summary>
    private async Task<PeregrineHost> StartNamedAsync(string path, string build, byte[] bytes, bool fastPath)
    {
        var identityTag = Escaped(StockTag(bytes));
        var brotliTag = Escaped(StockTag(Brotli(bytes)));
        string Properties(bool fingerprinted) => fingerprinted ? $$"""[ { "Name": "fingerprint", "Value": "{{build}}" }, { "Name": "label", "Value": "_framework/app.wasm" } ]""" : "[]";
        string Route(string route, bool fingerprinted) => $$"""
            { "Route": "{{route}}", "AssetFile": "{{path}}", "Selectors": [], "EndpointProperties": {{Properties(fingerprinted)}},
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{(fingerprinted ? "max-age=31536000, immutable" : "no-cache")}}" }, { "Name": "Content-Type", "Value": "application/wasm" },
                { "Name": "ETag", "Value": "{{identityTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            { "Route": "{{route}}", "AssetFile": "{{path}}.br", "Selectors": [ { "Name": "Content-Encoding", "Value": "br", "Quality": "0.5" } ], "EndpointProperties": {{Properties(fingerprinted)}},
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{(fingerprinted ? "max-age=31536000, immutable" : "no-cache")}}" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "application/wasm" },
                { "Name": "ETag", "Value": "{{brotliTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            """;
        var table = AssetRouteTable.Create(
            EndpointsManifest.Parse(ManifestFiles.Json($$"""
                { "Version": 1, "ManifestType": "Publish", "Endpoints": [
                  {{Route(path, fingerprinted: true)}}
                  {{Route("_framework/app.wasm", fingerprinted: false)}}
                  { "Route": "{{path}}.br", "AssetFile": "{{path}}.br", "Selectors": [], "EndpointProperties": [],
                    "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "application/wasm" },
                      { "Name": "ETag", "Value": "{{brotliTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] } ] }
                """), "test"),
            [],
            manifestCaching: true,
            file => Path.Combine(_tree.Root, file.TrimStart('/')));
        var host = await PeregrineHost.StartAsync(
            _tree.Root,
            o =>
            {
                o.Compression.CacheDirectory = _cache;
                o.Routes = table;
            },
            fastPath: fastPath);
        await host.Services.GetRequiredService<Compressor>().WhenIdle();
        return host;
    }

    private static string StockTag(byte[] bytes) => "\"" + Convert.ToBase64String(SHA256.HashData(bytes)) + "\"";

    private static string Escaped(string tag) => tag.Replace("\"", "\\\"", StringComparison.Ordinal);

    private static byte[] Brotli(byte[] bytes)
    {
        using var buffer = new MemoryStream();
        using (var brotli = new BrotliStream(buffer, CompressionLevel.SmallestSize))
        {
            brotli.Write(bytes);
        }

        return buffer.ToArray();
    }

    /// <summary>
    /// As publish writes them for one build: app.js with its br selector under its own route and
    /// its fingerprinted route (the latter with the <c>fingerprint</c> property), the fingerprinted
    /// route of app.js.br, and a route for other.js that looks fingerprinted but says nothing of it.
    /// </summary>
    private AssetRouteTable Table(string build, byte[]? script = null, bool withEncodedRoute = false, bool withUnmarkedRoute = false)
    {
        script ??= Script(1);
        var identityTag = Escaped(StockTag(script));
        var brotliTag = Escaped(StockTag(Brotli(script)));
        string Properties(bool fingerprinted) => fingerprinted ? $$"""[ { "Name": "fingerprint", "Value": "{{build}}" }, { "Name": "label", "Value": "js/app.js" } ]""" : "[]";
        string Identity(string route, string cacheControl, bool fingerprinted) => $$"""
            { "Route": "{{route}}", "AssetFile": "js/app.js", "Selectors": [], "EndpointProperties": {{Properties(fingerprinted)}},
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Type", "Value": "text/javascript" },
                { "Name": "ETag", "Value": "{{identityTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            { "Route": "{{route}}", "AssetFile": "js/app.js.br", "Selectors": [ { "Name": "Content-Encoding", "Value": "br", "Quality": "0.5" } ], "EndpointProperties": {{Properties(fingerprinted)}},
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "text/javascript" },
                { "Name": "ETag", "Value": "{{brotliTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            """;
        var encoded = withEncodedRoute ? $$"""
            { "Route": "js/app.{{build}}.js.br", "AssetFile": "js/app.js.br", "Selectors": [], "EndpointProperties": {{Properties(true)}},
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "text/javascript" },
                { "Name": "ETag", "Value": "{{brotliTag}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            """ : "";
        var unmarked = withUnmarkedRoute ? """
            { "Route": "js/other.khy4lop6wu.js", "AssetFile": "js/other.js", "Selectors": [], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" }, { "Name": "Content-Type", "Value": "text/javascript" } ] },
            """ : "";
        return AssetRouteTable.Create(
            EndpointsManifest.Parse(ManifestFiles.Json($$"""
                { "Version": 1, "ManifestType": "Publish", "Endpoints": [
                  {{Identity("js/app.js", "no-cache", fingerprinted: false)}}
                  {{Identity($"js/app.{build}.js", "max-age=31536000, immutable", fingerprinted: true)}}
                  {{encoded}}
                  {{unmarked}}
                  { "Route": "js/other.js", "AssetFile": "js/other.js", "Selectors": [], "EndpointProperties": [],
                    "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "no-cache" }, { "Name": "Content-Type", "Value": "text/javascript" } ] } ] }
                """), "test"),
            [],
            manifestCaching: true,
            path => Path.Combine(_tree.Root, path.TrimStart('/')));
    }

    private static string? Field(HttpResponseMessage response, string name)
        => response.Headers.NonValidated.TryGetValues(name, out var values) || response.Content.Headers.NonValidated.TryGetValues(name, out values)
            ? string.Join(", ", values)
            : null;
}
