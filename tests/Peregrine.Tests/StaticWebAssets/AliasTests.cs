using System.IO.Compression;
using System.Net;
using Microsoft.AspNetCore.Builder;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The endpoints manifest's routes in the index, on a folder and a manifest written by the test:
/// a fingerprinted route answers with its file's bytes, tag and variants under the manifest's
/// Cache-Control, follows the file when it changes, and an encoded file the manifest names is a
/// variant of its file and not a URL of its own.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class AliasTests
{
    // Large enough for compression to be worth it: 60 rules of about 90 bytes.
    private static readonly string Css = string.Concat(Enumerable.Range(0, 60).Select(i => $".rule-{i} {{ color: rebeccapurple; margin: {i}px; padding: 0; font-family: system-ui, sans-serif; }}\n"));

    /// <summary>A publish-style manifest for app.css: its own route, a fingerprinted one, and app.css.gz as an encoding of both and as routes of its own.</summary>
    private static AssetRouteTable Table(bool manifestCaching = true) => AssetRouteTable.Create(
        EndpointsManifest.Parse(ManifestFiles.Json("""
            { "Version": 1, "ManifestType": "Publish", "Endpoints": [
              { "Route": "app.css", "AssetFile": "app.css", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=3600, must-revalidate" } ] },
              { "Route": "app.css", "AssetFile": "app.css.gz", "Selectors": [ { "Name": "Content-Encoding", "Value": "gzip", "Quality": "0.5" } ], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=3600, must-revalidate" }, { "Name": "Content-Encoding", "Value": "gzip" } ] },
              { "Route": "app.css.gz", "AssetFile": "app.css.gz", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "no-cache" }, { "Name": "Content-Encoding", "Value": "gzip" } ] },
              { "Route": "app.abcdef1234.css", "AssetFile": "app.css", "Selectors": [], "EndpointProperties": [ { "Name": "fingerprint", "Value": "abcdef1234" } ],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" } ] },
              { "Route": "app.abcdef1234.css", "AssetFile": "app.css.gz", "Selectors": [ { "Name": "Content-Encoding", "Value": "gzip", "Quality": "0.5" } ], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" }, { "Name": "Content-Encoding", "Value": "gzip" } ] },
              { "Route": "gone.abcdef1234.js", "AssetFile": "gone.js", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" } ] } ] }
            """), "test"),
        [],
        manifestCaching);

    private static byte[] Gzip(string text)
    {
        using var buffer = new MemoryStream();
        using (var gzip = new GZipStream(buffer, CompressionLevel.SmallestSize))
        {
            gzip.Write(System.Text.Encoding.UTF8.GetBytes(text));
        }

        return buffer.ToArray();
    }

    private static Task<PeregrineHost> Start(TempTree site, AssetRouteTable table)
        => PeregrineHost.StartAsync(site.Root, options => options.Routes = table);

    [Fact]
    public async Task FingerprintedRoute_AnswersWithTheFilesBytesAndTag_UnderItsOwnCacheControl()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        await using var host = await Start(site, Table());

        using var file = await host.Client.GetAsync("/app.css");
        using var alias = await host.Client.GetAsync("/app.abcdef1234.css");
        Assert.Equal(HttpStatusCode.OK, alias.StatusCode);
        Assert.Equal(Css, await alias.Content.ReadAsStringAsync());
        Assert.Equal(file.Headers.ETag, alias.Headers.ETag);
        Assert.Equal(file.Content.Headers.ContentType, alias.Content.Headers.ContentType);
        Assert.Equal(file.Content.Headers.LastModified, alias.Content.Headers.LastModified);
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(alias));

        // The file under its own path carries what the manifest states for that route.
        Assert.Equal("max-age=3600, must-revalidate", ManifestFiles.CacheControl(file));
    }

    [Fact]
    public async Task FastPath_AnswersTheAliasWithItsOwnCacheControl()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        var pipeline = 0;
        await using var host = await PeregrineHost.StartAsync(
            site.Root,
            options => options.Routes = Table(),
            before: app => app.Use((context, next) =>
            {
                Interlocked.Increment(ref pipeline);
                return next(context);
            }),
            fastPath: true);

        // Each on a connection of its own, the fast path's to answer; the file's between the
        // alias's, to show that the alias's header blocks are its own.
        using var alias = await OnNewConnection(host, "/app.abcdef1234.css");
        using var file = await OnNewConnection(host, "/app.css");
        using var again = await OnNewConnection(host, "/app.abcdef1234.css");
        Assert.Equal(0, Volatile.Read(ref pipeline));
        Assert.Equal(Css, await alias.Content.ReadAsStringAsync());
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(alias));
        Assert.Equal("max-age=3600, must-revalidate", ManifestFiles.CacheControl(file));
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(again));
    }

    private static async Task<HttpResponseMessage> OnNewConnection(PeregrineHost host, string path)
    {
        using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero, AutomaticDecompression = DecompressionMethods.None });
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(host.Address, path));
        request.Headers.ConnectionClose = true;
        var response = await client.SendAsync(request);
        await response.Content.LoadIntoBufferAsync();
        return response;
    }

    [Fact]
    public async Task BuildManifestCaching_SendsNoCacheOnTheAlias()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        await using var host = await Start(site, Table(manifestCaching: false));
        using var alias = await host.Client.GetAsync("/app.abcdef1234.css");
        Assert.Equal("no-cache", ManifestFiles.CacheControl(alias));
    }

    [Fact]
    public async Task RouteToAFileNotIndexed_GoesOnToTheNextMiddleware()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        await using var host = await Start(site, Table());
        using var response = await host.Client.GetAsync("/gone.abcdef1234.js");
        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Fact]
    public async Task EncodedFileTheManifestNames_IsTheGzipVariant_AndItsOwnRoute()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        var sidecar = Gzip(Css);
        site.Write("app.css.gz", sidecar);
        File.SetLastWriteTimeUtc(Path.Combine(site.Root, "app.css.gz"), DateTime.UtcNow.AddSeconds(5));
        await using var host = await Start(site, Table());

        // Its own route answers with the stored bytes, as MapStaticAssets' does (EncodedFileRouteTests).
        using var asUrl = await host.Client.GetAsync("/app.css.gz");
        Assert.False(asUrl.Headers.Contains(PeregrineHost.NextHeader), "app.css.gz went past Peregrine.");
        Assert.Equal(sidecar, await asUrl.Content.ReadAsByteArrayAsync());
        Assert.Equal(["gzip"], asUrl.Content.Headers.ContentEncoding);

        // Through the alias: the file's variant, with the alias's Cache-Control, and its own tag.
        var (alias, body) = await FirstEncoded(host, "/app.abcdef1234.css", "gzip");
        Assert.Equal(sidecar, body);
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(alias));
        var (file, _) = await FirstEncoded(host, "/app.css", "gzip");
        Assert.Equal(file.Headers.ETag, alias.Headers.ETag);
        Assert.Equal("max-age=3600, must-revalidate", ManifestFiles.CacheControl(file));
        Assert.Contains("Accept-Encoding", alias.Headers.Vary);
    }

    [Fact]
    public async Task FileChange_ReachesItsAlias()
    {
        using var site = new TempTree();
        site.Write("app.css", Css);
        await using var host = await Start(site, Table());
        using var before = await host.Client.GetAsync("/app.abcdef1234.css");
        Assert.Equal(Css, await before.Content.ReadAsStringAsync());

        site.Write("app.css", "body { color: teal; }\n");
        var seen = "";
        for (var attempt = 0; attempt < 200 && seen != "body { color: teal; }\n"; attempt++)
        {
            await Task.Delay(25);
            seen = await host.Client.GetStringAsync("/app.abcdef1234.css");
        }

        Assert.Equal("body { color: teal; }\n", seen);
        using var after = await host.Client.GetAsync("/app.abcdef1234.css");
        using var file = await host.Client.GetAsync("/app.css");
        Assert.Equal(file.Headers.ETag, after.Headers.ETag);
        Assert.NotEqual(before.Headers.ETag, after.Headers.ETag);
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(after));

        // Removed with its file.
        File.Delete(Path.Combine(site.Root, "app.css"));
        var status = HttpStatusCode.OK;
        for (var attempt = 0; attempt < 200 && status == HttpStatusCode.OK; attempt++)
        {
            await Task.Delay(25);
            using var response = await host.Client.GetAsync("/app.abcdef1234.css");
            status = response.StatusCode;
        }

        Assert.Equal(HttpStatusCode.NotFound, status);
    }

    /// <summary>The first answer in <paramref name="coding"/> (variants are published after the index), within 10 s.</summary>
    private static async Task<(HttpResponseMessage Response, byte[] Body)> FirstEncoded(PeregrineHost host, string path, string coding)
    {
        for (var attempt = 0; attempt < 400; attempt++)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, path);
            request.Headers.TryAddWithoutValidation("Accept-Encoding", coding);
            var response = await host.Client.SendAsync(request);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            if (response.Content.Headers.ContentEncoding.Contains(coding))
            {
                return (response, await response.Content.ReadAsByteArrayAsync());
            }

            response.Dispose();
            await Task.Delay(25);
        }

        throw new Xunit.Sdk.XunitException($"{path} was never answered in {coding}.");
    }
}
