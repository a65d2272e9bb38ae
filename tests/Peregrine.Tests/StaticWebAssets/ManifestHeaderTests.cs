using System.IO.Compression;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The header fields the endpoints manifest states, sent as MapStaticAssets sends them: the
/// manifest's ETag for each representation (identity and gzip each have their own), its
/// Content-Type, Cache-Control and Vary, on a file under its own path and on its fingerprinted
/// alias, by the middleware and by the fast path alike; a tag a browser got from the stock app
/// gets a 304; and once the file changes, the manifest's tag no longer names the bytes and
/// Peregrine's own is sent.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class ManifestHeaderTests
{
    // Large enough for compression to be worth it: 60 rules of about 90 bytes.
    private static readonly string Css = string.Concat(Enumerable.Range(0, 60).Select(i => $".rule-{i} {{ color: rebeccapurple; margin: {i}px; padding: 0; font-family: system-ui, sans-serif; }}\n"));
    private static readonly byte[] CssGzip = Gzip(Css);
    private static readonly byte[] Png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3, 4];

    /// <summary>A tag as the SDK writes it: the whole SHA-256 of the bytes, in base64, quoted.</summary>
    private static string StockTag(byte[] bytes) => "\"" + Convert.ToBase64String(SHA256.HashData(bytes)) + "\"";

    private static readonly string IdentityTag = StockTag(Encoding.UTF8.GetBytes(Css));
    private static readonly string GzipTag = StockTag(CssGzip);

    /// <summary>A publish manifest for app.css (its own route and a fingerprinted one, each with its gzip endpoint) and logo.png; its encoded files lie under <paramref name="site"/>.</summary>
    private static AssetRouteTable Table(TempTree site)
    {
        string Route(string route, string cacheControl) => $$"""
            { "Route": "{{route}}", "AssetFile": "app.css", "Selectors": [], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Type", "Value": "text/css" },
                { "Name": "ETag", "Value": "{{Escaped(IdentityTag)}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            { "Route": "{{route}}", "AssetFile": "app.css.gz", "Selectors": [ { "Name": "Content-Encoding", "Value": "gzip", "Quality": "0.5" } ], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Encoding", "Value": "gzip" }, { "Name": "Content-Type", "Value": "text/css" },
                { "Name": "ETag", "Value": "{{Escaped(GzipTag)}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            """;
        return AssetRouteTable.Create(
            EndpointsManifest.Parse(ManifestFiles.Json($$"""
                { "Version": 1, "ManifestType": "Publish", "Endpoints": [
                  {{Route("app.css", "no-cache")}}
                  {{Route("app.abcdef1234.css", "max-age=31536000, immutable")}}
                  { "Route": "logo.png", "AssetFile": "logo.png", "Selectors": [], "EndpointProperties": [],
                    "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "no-cache" }, { "Name": "Content-Type", "Value": "image/png" },
                      { "Name": "ETag", "Value": "{{Escaped(StockTag(Png))}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] } ] }
                """), "test"),
            [],
            manifestCaching: true,
            path => Path.Combine(site.Root, path.TrimStart('/')));
    }

    private static string Escaped(string tag) => tag.Replace("\"", "\\\"", StringComparison.Ordinal);

    private static byte[] Gzip(string text)
    {
        using var buffer = new MemoryStream();
        using (var gzip = new GZipStream(buffer, CompressionLevel.SmallestSize))
        {
            gzip.Write(Encoding.UTF8.GetBytes(text));
        }

        return buffer.ToArray();
    }

    /// <summary>A site as publish leaves it: app.css with the app.css.gz the manifest names, and logo.png.</summary>
    private static TempTree Site()
    {
        var site = new TempTree();
        site.Write("app.css", Css);
        site.Write("app.css.gz", CssGzip);
        File.SetLastWriteTimeUtc(Path.Combine(site.Root, "app.css.gz"), DateTime.UtcNow.AddSeconds(5));
        site.Write("logo.png", Png);
        return site;
    }

    /// <summary>A host with the manifest, counting the requests that reach the pipeline (none should, with the fast path on).</summary>
    private sealed class Server : IAsyncDisposable
    {
        private readonly bool _fastPath;
        private int _pipeline;

        private Server(bool fastPath) => _fastPath = fastPath;

        public PeregrineHost Host { get; private set; } = null!;

        public int Pipeline => Volatile.Read(ref _pipeline);

        public static Task<Server> StartAsync(TempTree site, bool fastPath) => StartAsync(site, Table(site), fastPath);

        public static async Task<Server> StartAsync(TempTree site, AssetRouteTable routes, bool fastPath, Action<PeregrineOptions>? configure = null)
        {
            var server = new Server(fastPath);
            server.Host = await PeregrineHost.StartAsync(
                site.Root,
                options =>
                {
                    options.Routes = routes;
                    configure?.Invoke(options);
                },
                before: app => app.Use((context, next) =>
                {
                    Interlocked.Increment(ref server._pipeline);
                    return next(context);
                }),
                fastPath: fastPath);
            return server;
        }

        /// <summary>One request; with the fast path, on a connection of its own (the fast path answers a connection's requests).</summary>
        public async Task<HttpResponseMessage> SendAsync(string path, string? acceptEncoding = null, string? ifNoneMatch = null, (string Tag, string Range)? ifRange = null)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(Host.Address, path));
            if (acceptEncoding is not null)
            {
                request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
            }

            if (ifNoneMatch is not null)
            {
                request.Headers.TryAddWithoutValidation("If-None-Match", ifNoneMatch);
            }

            if (ifRange is { } conditional)
            {
                request.Headers.TryAddWithoutValidation("If-Range", conditional.Tag);
                request.Headers.TryAddWithoutValidation("Range", conditional.Range);
            }

            if (!_fastPath)
            {
                var pooled = await Host.Client.SendAsync(request);
                await pooled.Content.LoadIntoBufferAsync();
                return pooled;
            }

            using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero, AutomaticDecompression = DecompressionMethods.None });
            request.Headers.ConnectionClose = true;
            var response = await client.SendAsync(request);
            await response.Content.LoadIntoBufferAsync();
            return response;
        }

        /// <summary>The first answer in <paramref name="coding"/> (variants are published after the index), within 10 s.</summary>
        public async Task<HttpResponseMessage> FirstGzipAsync(string path, string acceptEncoding = "gzip", string coding = "gzip")
        {
            for (var attempt = 0; attempt < 400; attempt++)
            {
                var response = await SendAsync(path, acceptEncoding);
                if (response.Content.Headers.ContentEncoding.Contains(coding))
                {
                    return response;
                }

                response.Dispose();
                await Task.Delay(25);
            }

            throw new Xunit.Sdk.XunitException($"{path} was never answered in {coding}.");
        }

        public ValueTask DisposeAsync() => Host.DisposeAsync();
    }

    private static string? Field(HttpResponseMessage response, string name)
        => response.Headers.NonValidated.TryGetValues(name, out var values) || response.Content.Headers.NonValidated.TryGetValues(name, out values)
            ? string.Join(", ", values)
            : null;

    [Theory]
    [InlineData("/app.css", "no-cache", false)]
    [InlineData("/app.abcdef1234.css", "max-age=31536000, immutable", false)]
    [InlineData("/app.css", "no-cache", true)]
    [InlineData("/app.abcdef1234.css", "max-age=31536000, immutable", true)]
    public async Task Route_SendsTheManifestsFields_PerRepresentation(string path, string cacheControl, bool fastPath)
    {
        using var site = Site();
        await using var server = await Server.StartAsync(site, fastPath);

        using var gzip = await server.FirstGzipAsync(path);
        using var identity = await server.SendAsync(path);

        Assert.Equal(CssGzip, await gzip.Content.ReadAsByteArrayAsync());
        Assert.Equal(GzipTag, Field(gzip, "ETag"));
        Assert.Equal(Css, await identity.Content.ReadAsStringAsync());
        Assert.Equal(IdentityTag, Field(identity, "ETag"));
        foreach (var response in (HttpResponseMessage[])[gzip, identity])
        {
            Assert.Equal("text/css", Field(response, "Content-Type"));
            Assert.Equal(cacheControl, Field(response, "Cache-Control"));
            Assert.Equal("Accept-Encoding", Field(response, "Vary"));
        }

        Assert.Equal(fastPath ? 0 : 2, Math.Min(server.Pipeline, 2));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task StatedVary_IsSent_OnAFileThatIsNotCompressed(bool fastPath)
    {
        using var site = Site();
        await using var server = await Server.StartAsync(site, fastPath);

        using var response = await server.SendAsync("/logo.png", "br, gzip");

        Assert.Equal("Accept-Encoding", Field(response, "Vary"));
        Assert.Equal("image/png", Field(response, "Content-Type"));
        Assert.Equal(StockTag(Png), Field(response, "ETag"));
        Assert.Equal(fastPath ? 0 : 1, server.Pipeline);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task StockTags_Get304_EachForItsOwnRepresentation(bool fastPath)
    {
        using var site = Site();
        await using var server = await Server.StartAsync(site, fastPath);
        (await server.FirstGzipAsync("/app.abcdef1234.css")).Dispose();

        using var identity = await server.SendAsync("/app.abcdef1234.css", ifNoneMatch: IdentityTag);
        using var gzip = await server.SendAsync("/app.abcdef1234.css", "gzip", ifNoneMatch: GzipTag);
        using var crossed = await server.SendAsync("/app.abcdef1234.css", "gzip", ifNoneMatch: IdentityTag);

        Assert.Equal(HttpStatusCode.NotModified, identity.StatusCode);
        Assert.Equal(IdentityTag, Field(identity, "ETag"));
        Assert.Equal(HttpStatusCode.NotModified, gzip.StatusCode);
        Assert.Equal(GzipTag, Field(gzip, "ETag"));
        Assert.Equal(HttpStatusCode.OK, crossed.StatusCode);
        Assert.Equal(GzipTag, Field(crossed, "ETag"));
        if (fastPath)
        {
            Assert.Equal(0, server.Pipeline);
        }
    }

    [Fact]
    public async Task StockTagInIfRange_GetsTheRange()
    {
        using var site = Site();
        await using var server = await Server.StartAsync(site, fastPath: false);

        using var range = await server.SendAsync("/app.css", ifRange: (IdentityTag, "bytes=0-9"));

        Assert.Equal(HttpStatusCode.PartialContent, range.StatusCode);
        Assert.Equal(Css[..10], await range.Content.ReadAsStringAsync());
        Assert.Equal(IdentityTag, Field(range, "ETag"));
    }

    [Fact]
    public async Task ChangedFile_SendsPeregrinesOwnTag_AndTheStockTagNoLongerMatches()
    {
        using var site = Site();
        await using var server = await Server.StartAsync(site, fastPath: false);

        const string Edited = "body { color: teal; }\n";
        site.Write("app.css", Edited);
        var seen = "";
        for (var attempt = 0; attempt < 200 && seen != Edited; attempt++)
        {
            await Task.Delay(25);
            using var poll = await server.SendAsync("/app.abcdef1234.css");
            seen = await poll.Content.ReadAsStringAsync();
        }

        using var file = await server.SendAsync("/app.css");
        using var alias = await server.SendAsync("/app.abcdef1234.css", ifNoneMatch: IdentityTag);

        Assert.Equal(Edited, await alias.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.OK, alias.StatusCode);
        Assert.NotEqual(IdentityTag, Field(alias, "ETag"));
        Assert.NotEqual(StockTag(Encoding.UTF8.GetBytes(Edited)), Field(alias, "ETag"));
        Assert.Equal(Field(file, "ETag"), Field(alias, "ETag"));
    }
}
