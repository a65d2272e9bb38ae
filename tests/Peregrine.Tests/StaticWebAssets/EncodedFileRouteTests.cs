using System.IO.Compression;
using System.Net;
using System.Security.Cryptography;
using System.Text;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The endpoints manifest's routes whose answer is itself an encoded file (<c>/app.css.br</c>,
/// and its fingerprinted <c>/app.khy4lop6wu.css.br</c>), answered as a stock app answers them
/// (measured on a published <c>dotnet new mvc</c> app): 200 with the stored bytes,
/// <c>Content-Encoding: br</c>, the type of the file they encode, the route's ETag,
/// Cache-Control and Vary, whatever the request accepts; ranges count the stored bytes. And the
/// manifest's routes in another case (<c>/APP.CSS</c>), which endpoint routing matches as the
/// route: the same entry, the same answer. By the middleware and with the fast path on.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class EncodedFileRouteTests
{
    private static readonly string Css = string.Concat(Enumerable.Range(0, 40).Select(i => $".rule-{i} {{ color: rebeccapurple; margin: {i}px; }}\n"));
    private static readonly byte[] CssBrotli = Brotli(Css);

    private static string StockTag(byte[] bytes) => "\"" + Convert.ToBase64String(SHA256.HashData(bytes)) + "\"";

    private static readonly string IdentityTag = StockTag(Encoding.UTF8.GetBytes(Css));
    private static readonly string BrotliTag = StockTag(CssBrotli);

    private static string Escaped(string tag) => tag.Replace("\"", "\\\"", StringComparison.Ordinal);

    /// <summary>As publish writes them: app.css with its br selector, app.css.br as a route, and the fingerprinted route of each.</summary>
    private static AssetRouteTable Table(TempTree site)
    {
        string Identity(string route, string cacheControl) => $$"""
            { "Route": "{{route}}", "AssetFile": "app.css", "Selectors": [], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Type", "Value": "text/css" },
                { "Name": "ETag", "Value": "{{Escaped(IdentityTag)}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            { "Route": "{{route}}", "AssetFile": "app.css.br", "Selectors": [ { "Name": "Content-Encoding", "Value": "br", "Quality": "0.5" } ], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "text/css" },
                { "Name": "ETag", "Value": "{{Escaped(BrotliTag)}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] },
            """;
        string Encoded(string route, string cacheControl) => $$"""
            { "Route": "{{route}}", "AssetFile": "app.css.br", "Selectors": [], "EndpointProperties": [],
              "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "{{cacheControl}}" }, { "Name": "Content-Encoding", "Value": "br" }, { "Name": "Content-Type", "Value": "text/css" },
                { "Name": "ETag", "Value": "{{Escaped(BrotliTag)}}" }, { "Name": "Vary", "Value": "Accept-Encoding" } ] }
            """;
        return AssetRouteTable.Create(
            EndpointsManifest.Parse(ManifestFiles.Json($$"""
                { "Version": 1, "ManifestType": "Publish", "Endpoints": [
                  {{Identity("app.css", "no-cache")}}
                  {{Identity("app.khy4lop6wu.css", "max-age=31536000, immutable")}}
                  {{Encoded("app.css.br", "no-cache")}},
                  {{Encoded("app.khy4lop6wu.css.br", "max-age=31536000, immutable")}} ] }
                """), "test"),
            [],
            manifestCaching: true,
            path => Path.Combine(site.Root, path.TrimStart('/')));
    }

    private static byte[] Brotli(string text)
    {
        using var buffer = new MemoryStream();
        using (var brotli = new BrotliStream(buffer, CompressionLevel.SmallestSize))
        {
            brotli.Write(Encoding.UTF8.GetBytes(text));
        }

        return buffer.ToArray();
    }

    private static TempTree Site()
    {
        var site = new TempTree();
        site.Write("app.css", Css);
        site.Write("app.css.br", CssBrotli);
        return site;
    }

    private static Task<PeregrineHost> Start(TempTree site, bool fastPath)
        => PeregrineHost.StartAsync(site.Root, options => options.Routes = Table(site), fastPath: fastPath);

    /// <summary>One request on a connection of its own (the fast path answers a connection's requests from its first).</summary>
    private static async Task<HttpResponseMessage> Send(PeregrineHost host, string path, string? acceptEncoding = null, string? range = null)
    {
        using var client = new HttpClient(new SocketsHttpHandler { AutomaticDecompression = DecompressionMethods.None }) { BaseAddress = host.Address };
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (acceptEncoding is not null)
        {
            request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        }

        if (range is not null)
        {
            request.Headers.TryAddWithoutValidation("Range", range);
        }

        var response = await client.SendAsync(request);
        await response.Content.LoadIntoBufferAsync();
        return response;
    }

    private static string? Field(HttpResponseMessage response, string name)
        => response.Headers.NonValidated.TryGetValues(name, out var values) || response.Content.Headers.NonValidated.TryGetValues(name, out values)
            ? string.Join(", ", values)
            : null;

    [Theory]
    [InlineData("/app.css.br", null, "no-cache", false)]
    [InlineData("/app.css.br", "gzip", "no-cache", false)]
    [InlineData("/app.css.br", "br, gzip", "no-cache", true)]
    [InlineData("/app.khy4lop6wu.css.br", null, "max-age=31536000, immutable", false)]
    [InlineData("/app.khy4lop6wu.css.br", "identity", "max-age=31536000, immutable", true)]
    public async Task EncodedFileRoute_AnswersWithTheStoredBytesUnderItsCoding(string path, string? acceptEncoding, string cacheControl, bool fastPath)
    {
        using var site = Site();
        await using var host = await Start(site, fastPath);
        using var response = await Send(host, path, acceptEncoding);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.False(response.Headers.Contains(PeregrineHost.NextHeader), path + " went past Peregrine.");
        Assert.Equal(CssBrotli, await response.Content.ReadAsByteArrayAsync());
        Assert.Equal("br", Field(response, "Content-Encoding"));
        Assert.Equal("text/css", Field(response, "Content-Type"));
        Assert.Equal(BrotliTag, Field(response, "ETag"));
        Assert.Equal(cacheControl, Field(response, "Cache-Control"));
        Assert.Equal("Accept-Encoding", Field(response, "Vary"));
        Assert.Equal(CssBrotli.Length.ToString(System.Globalization.CultureInfo.InvariantCulture), Field(response, "Content-Length"));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task EncodedFileRoute_RangeCountsTheStoredBytes(bool fastPath)
    {
        using var site = Site();
        await using var host = await Start(site, fastPath);
        using var response = await Send(host, "/app.css.br", range: "bytes=0-9");

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Equal(CssBrotli[..10], await response.Content.ReadAsByteArrayAsync());
        Assert.Equal($"bytes 0-9/{CssBrotli.Length}", Field(response, "Content-Range"));
        Assert.Equal("br", Field(response, "Content-Encoding"));
    }

    [Fact]
    public async Task EncodedFileRoute_IsNotEncodedAgain()
    {
        using var site = Site();
        await using var host = await Start(site, fastPath: false);
        await Task.Delay(300);
        using var response = await Send(host, "/app.css.br", "br, gzip, zstd");
        Assert.Equal("br", Field(response, "Content-Encoding"));
        Assert.Equal(CssBrotli, await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task PlainRoute_StillNegotiatesItsStatedBrotli()
    {
        using var site = Site();
        await using var host = await Start(site, fastPath: false);
        using var identity = await Send(host, "/app.css");
        Assert.Equal(IdentityTag, Field(identity, "ETag"));
        Assert.Null(Field(identity, "Content-Encoding"));

        // The stated file is read after the index, in the background.
        for (var attempt = 0; attempt < 200; attempt++)
        {
            using var encoded = await Send(host, "/app.css", "br");
            if (Field(encoded, "Content-Encoding") == "br")
            {
                Assert.Equal(BrotliTag, Field(encoded, "ETag"));
                Assert.Equal(CssBrotli, await encoded.Content.ReadAsByteArrayAsync());
                return;
            }

            await Task.Delay(25);
        }

        Assert.Fail("/app.css was never answered in br.");
    }

    [Theory]
    [InlineData("/APP.CSS", "/app.css", false)]
    [InlineData("/App.Css", "/app.css", true)]
    [InlineData("/App.KHY4LOP6WU.css", "/app.khy4lop6wu.css", false)]
    [InlineData("/app.CSS.BR", "/app.css.br", false)]
    [InlineData("/App.Khy4lop6wu.Css.Br", "/app.khy4lop6wu.css.br", true)]
    public async Task RouteInAnotherCase_AnswersAsTheRoute(string requested, string route, bool fastPath)
    {
        using var site = Site();
        await using var host = await Start(site, fastPath);
        using var expected = await Send(host, route);
        using var response = await Send(host, requested);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.False(response.Headers.Contains(PeregrineHost.NextHeader), requested + " went past Peregrine.");
        Assert.Equal(await expected.Content.ReadAsByteArrayAsync(), await response.Content.ReadAsByteArrayAsync());
        foreach (var field in (string[])["ETag", "Cache-Control", "Content-Type", "Content-Encoding", "Vary", "Last-Modified"])
        {
            Assert.Equal(Field(expected, field), Field(response, field));
        }
    }

    [Theory]
    [InlineData("/APP.CS")]
    [InlineData("/app.css.BR.gz")]
    public async Task PathNoRouteNamesInAnyCase_GoesOn(string requested)
    {
        using var site = Site();
        await using var host = await Start(site, fastPath: false);
        using var response = await Send(host, requested);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader), requested + " was answered.");
    }

    [Fact]
    public async Task FileNoRouteNames_KeepsItsCase()
    {
        // Endpoint routing matches MapStaticAssets' routes ignoring case; a file the manifest does
        // not name is no route, and is found as the file system names it.
        using var site = Site();
        site.Write("other.css", "other { }");
        await using var host = await Start(site, fastPath: false);
        using var exact = await Send(host, "/other.css");
        using var folded = await Send(host, "/OTHER.css");
        Assert.Equal(HttpStatusCode.OK, exact.StatusCode);
        Assert.True(folded.Headers.Contains(PeregrineHost.NextHeader), "/OTHER.css was answered.");
    }
}
