using System.IO.Compression;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// A Development build, as <c>dotnet run</c> serves it: the endpoints manifest states a gzip
/// encoding for each file, whose bytes the build wrote under a generated name in another folder
/// (obj/…/compressed). A client that accepts Brotli and gzip gets that gzip file with the
/// manifest's tag, as MapStaticAssets sends it, not Peregrine's own Brotli; a file too small
/// for Peregrine to compress still gets its (larger) gzip. Once the file is edited the build's
/// copy no longer decodes to it, and Peregrine's own variants and tags take over.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class BuildEncodingTests
{
    private static readonly string Css = string.Concat(Enumerable.Range(0, 80).Select(i => $".rule-{i} {{ color: rebeccapurple; margin: {i}px; padding: 0; font-family: system-ui, sans-serif; }}\n"));
    private const string Tiny = ".lib-marker { color: rebeccapurple; }\n";

    // The build compresses at its fastest level: a gzip far larger than Peregrine's Brotli.
    private static readonly byte[] CssGzip = Gzip(Css, CompressionLevel.Fastest);
    private static readonly byte[] TinyGzip = Gzip(Tiny, CompressionLevel.Fastest);

    private static string StockTag(byte[] bytes) => "\"" + Convert.ToBase64String(SHA256.HashData(bytes)) + "\"";

    private static byte[] Gzip(string text, CompressionLevel level)
    {
        using var buffer = new MemoryStream();
        using (var gzip = new GZipStream(buffer, level))
        {
            gzip.Write(Encoding.UTF8.GetBytes(text));
        }

        return buffer.ToArray();
    }

    /// <summary>The web root (app.css, tiny.css) and the build's folder of compressed copies, as a build leaves them.</summary>
    private sealed class Build : IDisposable
    {
        public TempTree Site { get; } = new();

        public TempTree Compressed { get; } = new();

        public Build()
        {
            Site.Write("app.css", Css);
            Site.Write("tiny.css", Tiny);
            Compressed.Write("hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz", CssGzip);
            Compressed.Write("nd853jy5ws-{0}-py479t1scp-py479t1scp.gz", TinyGzip);
        }

        /// <summary>The build manifest: app.css under its own route and a fingerprinted one, tiny.css, each with its gzip endpoint.</summary>
        public AssetRouteTable Table()
        {
            static string Route(string route, string file, string cacheControl, byte[] identity, byte[] gzip) => $$"""
                { "Route": "{{route}}", "AssetFile": "{{file}}", "Selectors": [], "EndpointProperties": [],
                  "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Type", "Value": "text/css" },
                    { "Name": "ETag", "Value": "{{Escaped(StockTag(identity))}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
                { "Route": "{{route}}", "AssetFile": "{{file}}.gz", "Selectors": [ { "Name": "Content-Encoding", "Value": "gzip", "Quality": "{{(1.0 / (gzip.Length + 1)).ToString(System.Globalization.CultureInfo.InvariantCulture)}}" } ], "EndpointProperties": [],
                  "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Encoding", "Value": "gzip" }, { "Name": "Content-Type", "Value": "text/css" },
                    { "Name": "ETag", "Value": "{{Escaped(StockTag(gzip))}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
                """;
            var css = Encoding.UTF8.GetBytes(Css);
            var manifest = EndpointsManifest.Parse(ManifestFiles.Json($$"""
                { "Version": 1, "ManifestType": "Build", "Endpoints": [
                  {{Route("app.css", "app.css", "no-cache", css, CssGzip)}}
                  {{Route("app.khy4lop6wu.css", "app.css", "max-age=31536000, immutable", css, CssGzip)}}
                  {{Route("tiny.css", "tiny.css", "no-cache", Encoding.UTF8.GetBytes(Tiny), TinyGzip)}} ] }
                """), "test");
            var copies = new Dictionary<string, string>
            {
                ["/app.css.gz"] = Path.Combine(Compressed.Root, "hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz"),
                ["/tiny.css.gz"] = Path.Combine(Compressed.Root, "nd853jy5ws-{0}-py479t1scp-py479t1scp.gz"),
            };
            return AssetRouteTable.Create(manifest, [], manifestCaching: false, copies.GetValueOrDefault);
        }

        public void Dispose()
        {
            Site.Dispose();
            Compressed.Dispose();
        }
    }

    private static string Escaped(string tag) => tag.Replace("\"", "\\\"", StringComparison.Ordinal);

    private static string? Field(HttpResponseMessage response, string name)
        => response.Headers.NonValidated.TryGetValues(name, out var values) || response.Content.Headers.NonValidated.TryGetValues(name, out values)
            ? string.Join(", ", values)
            : null;

    private static Task<PeregrineHost> StartAsync(Build build, bool fastPath = false, ManifestEncodingPolicy policy = ManifestEncodingPolicy.AsStated)
        => PeregrineHost.StartAsync(build.Site.Root, options =>
        {
            options.Routes = build.Table();
            options.Compression.ManifestEncodings = policy;
        }, fastPath: fastPath);

    /// <summary>One request; with the fast path, on a connection of its own (the fast path answers a connection's requests).</summary>
    private static async Task<HttpResponseMessage> SendAsync(PeregrineHost host, string path, string? acceptEncoding, bool fastPath = false)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(host.Address, path));
        if (acceptEncoding is not null)
        {
            request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        }

        if (!fastPath)
        {
            var pooled = await host.Client.SendAsync(request);
            await pooled.Content.LoadIntoBufferAsync();
            return pooled;
        }

        using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero, AutomaticDecompression = DecompressionMethods.None });
        request.Headers.ConnectionClose = true;
        var response = await client.SendAsync(request);
        await response.Content.LoadIntoBufferAsync();
        return response;
    }

    /// <summary>The first answer that is encoded at all (variants are published after the index), within 10 s.</summary>
    private static async Task<HttpResponseMessage> FirstEncodedAsync(PeregrineHost host, string path, string acceptEncoding, bool fastPath = false)
    {
        for (var attempt = 0; attempt < 400; attempt++)
        {
            var response = await SendAsync(host, path, acceptEncoding, fastPath);
            if (response.Content.Headers.ContentEncoding.Count > 0)
            {
                return response;
            }

            response.Dispose();
            await Task.Delay(25);
        }

        throw new Xunit.Sdk.XunitException($"{path} was never answered encoded.");
    }

    private static string Decoded(HttpResponseMessage response, byte[] body)
    {
        using Stream decoder = response.Content.Headers.ContentEncoding.Single() switch
        {
            "br" => new BrotliStream(new MemoryStream(body), CompressionMode.Decompress),
            "gzip" => new GZipStream(new MemoryStream(body), CompressionMode.Decompress),
            var other => throw new Xunit.Sdk.XunitException("unexpected coding " + other),
        };
        using var reader = new StreamReader(decoder, Encoding.UTF8);
        return reader.ReadToEnd();
    }

    [Theory]
    [InlineData("/app.css", "no-cache", false)]
    [InlineData("/app.khy4lop6wu.css", "no-cache", false)]
    [InlineData("/app.css", "no-cache", true)]
    [InlineData("/app.khy4lop6wu.css", "no-cache", true)]
    public async Task BrotliAndGzipClient_GetsTheBuildsGzip_UnderTheManifestsTag(string path, string cacheControl, bool fastPath)
    {
        using var build = new Build();
        await using var host = await StartAsync(build, fastPath);

        using var response = await FirstEncodedAsync(host, path, "br, gzip", fastPath);

        Assert.Equal("gzip", Field(response, "Content-Encoding"));
        Assert.Equal(CssGzip, await response.Content.ReadAsByteArrayAsync());
        Assert.Equal(CssGzip.Length.ToString(System.Globalization.CultureInfo.InvariantCulture), Field(response, "Content-Length"));
        Assert.Equal(StockTag(CssGzip), Field(response, "ETag"));
        Assert.Equal(cacheControl, Field(response, "Cache-Control"));
        Assert.Equal("text/css", Field(response, "Content-Type"));
        Assert.Equal("Accept-Encoding", Field(response, "Vary"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task TinyFile_GetsItsStatedGzip_ThoughItIsLarger(bool fastPath)
    {
        using var build = new Build();
        await using var host = await StartAsync(build, fastPath);

        using var gzip = await FirstEncodedAsync(host, "/tiny.css", "br, gzip", fastPath);
        using var identity = await SendAsync(host, "/tiny.css", "identity", fastPath);

        Assert.True(TinyGzip.Length > Tiny.Length);
        Assert.Equal(TinyGzip, await gzip.Content.ReadAsByteArrayAsync());
        Assert.Equal(StockTag(TinyGzip), Field(gzip, "ETag"));
        Assert.Equal(Tiny, await identity.Content.ReadAsStringAsync());
        Assert.Equal(StockTag(Encoding.UTF8.GetBytes(Tiny)), Field(identity, "ETag"));
    }

    [Fact]
    public async Task EditedFile_GetsPeregrinesOwnVariants_UnderItsOwnTags()
    {
        using var build = new Build();
        await using var host = await StartAsync(build);
        (await FirstEncodedAsync(host, "/app.css", "br, gzip")).Dispose();

        var edited = Css.Replace("rebeccapurple", "teal", StringComparison.Ordinal);
        build.Site.Write("app.css", edited);
        HttpResponseMessage? response = null;
        for (var attempt = 0; attempt < 400; attempt++)
        {
            response?.Dispose();
            await Task.Delay(25);
            response = await SendAsync(host, "/app.khy4lop6wu.css", "br, gzip");
            var body = await response.Content.ReadAsByteArrayAsync();
            if (response.Content.Headers.ContentEncoding.Count > 0 && Decoded(response, body) == edited)
            {
                break;
            }
        }

        using (response)
        {
            Assert.NotNull(response);
            Assert.Equal(edited, Decoded(response, await response.Content.ReadAsByteArrayAsync()));
            Assert.Equal("br", Field(response, "Content-Encoding"));
            Assert.NotEqual(StockTag(CssGzip), Field(response, "ETag"));
            Assert.NotEqual(StockTag(await response.Content.ReadAsByteArrayAsync()), Field(response, "ETag"));
        }
    }

    [Fact]
    public async Task PreferOwn_ServesPeregrinesBrotli_InsteadOfTheBuildsGzip()
    {
        using var build = new Build();
        await using var host = await StartAsync(build, policy: ManifestEncodingPolicy.PreferOwn);

        using var response = await FirstEncodedAsync(host, "/app.css", "br, gzip");

        Assert.Equal("br", Field(response, "Content-Encoding"));
        Assert.Equal(Css, Decoded(response, await response.Content.ReadAsByteArrayAsync()));
        Assert.True(response.Content.Headers.ContentLength < CssGzip.Length);
    }

    [Fact]
    public async Task MissingBuildCopy_GetsPeregrinesOwnVariants()
    {
        using var build = new Build();
        File.Delete(Path.Combine(build.Compressed.Root, "hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz"));
        await using var host = await StartAsync(build);

        using var response = await FirstEncodedAsync(host, "/app.css", "br, gzip");

        Assert.Equal("br", Field(response, "Content-Encoding"));
        Assert.Equal(Css, Decoded(response, await response.Content.ReadAsByteArrayAsync()));
    }
}
