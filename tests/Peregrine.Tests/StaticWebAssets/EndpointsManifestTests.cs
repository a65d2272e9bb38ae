using Peregrine.StaticWebAssets;

namespace Peregrine.Tests.StaticWebAssets;

public sealed class EndpointsManifestTests
{
    private static readonly EndpointsManifest s_build = EndpointsManifest.Load(ManifestFiles.BuildEndpoints);
    private static readonly EndpointsManifest s_publish = EndpointsManifest.Load(ManifestFiles.PublishEndpoints);

    private static AssetRoute Route(EndpointsManifest manifest, string path) => Assert.Single(manifest.Routes, r => r.Path == path);

    [Fact]
    public void ManifestType_BuildAndPublish_AreToldApart()
    {
        Assert.True(s_build.IsBuild);
        Assert.False(s_publish.IsBuild);
    }

    [Fact]
    public void FingerprintedRoute_NamesItsFileAndStatesImmutableCaching()
    {
        var route = Route(s_publish, "/app.khy4lop6wu.css");
        Assert.Equal("/app.css", route.AssetPath);
        Assert.Equal("max-age=31536000, immutable", route.CacheControl);
        Assert.Equal("khy4lop6wu", route.Properties["fingerprint"]);
        Assert.Equal("app.css", route.Properties["label"]);
        Assert.False(route.IsEncodedFile);
    }

    [Fact]
    public void Route_WithEncodedEndpoints_ListsThemAsEncodingsOfOneRoute()
    {
        var route = Route(s_publish, "/_framework/blazor.web.9hsif5t8mt.js");
        Assert.Equal("/_framework/blazor.web.js", route.AssetPath);
        Assert.Equal(
            [new AssetEncoding("br", "/_framework/blazor.web.js.br", "\"W54yBciUhihi+J55mw4K4JKXiLyDNM4st5s8Ala9mrc=\"", 0.000021017676), new AssetEncoding("gzip", "/_framework/blazor.web.js.gz", "\"a5Q1z2BZ9yfskRf/ZMlseqO2zm+Kw37RXMm/dRgIQlE=\"", 0.000017970744)],
            route.Encodings.OrderBy(e => e.Coding, StringComparer.Ordinal));
        Assert.Equal("text/javascript", route.Header("content-type"));
        Assert.Equal("\"a5Q1z2BZ9yfskRf/ZMlseqO2zm+Kw37RXMm/dRgIQlE=\"", route.EncodedETag("gzip"));
    }

    [Fact]
    public void EncodedFileRoute_IsMarkedAsOne()
    {
        Assert.True(Route(s_publish, "/app.css.br").IsEncodedFile);
        Assert.True(Route(s_build, "/app.khy4lop6wu.css.gz").IsEncodedFile);
    }

    [Fact]
    public void Routes_AreOnePerPathInManifestOrder()
    {
        // 64 endpoints: 40 routes, of which 24 answer with a .br or .gz file of their own.
        Assert.Equal(40, s_publish.Routes.Count);
        Assert.Equal(40, s_publish.Routes.Select(r => r.Path).Distinct(StringComparer.Ordinal).Count());
        Assert.Equal(24, s_publish.Routes.Count(r => r.IsEncodedFile));
        Assert.Equal("/app.css", s_publish.Routes.First(r => r.Path.StartsWith("/app.", StringComparison.Ordinal)).Path);
    }

    [Fact]
    public void LibraryBundle_PlainNameRoute_AnswersWithTheFingerprintedAsset()
    {
        // The build names the bundle's file by its fingerprint; its plain name is the alias.
        var route = Route(s_build, "/_content/Lib/Lib.bundle.scp.css");
        Assert.Equal("/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css", route.AssetPath);
        Assert.Equal("no-cache", route.CacheControl);
    }

    [Fact]
    public void StylesBundle_CarriesTheLinkHeaderTheManifestStates()
    {
        Assert.Equal("<_content/Lib/Lib.h77jbnbuq3.bundle.scp.css>; rel=\"preload\"; as=\"style\"", Route(s_publish, "/BlazorApp.styles.css").Header("Link"));
    }

    [Theory]
    [InlineData("""{ "Version": 1, "ManifestType": "Build", "Endpoints": [ { "Route": "../x", "AssetFile": "x" } ] }""", "not a plain path")]
    [InlineData("""{ "Version": 1, "ManifestType": "Build", "Endpoints": [ { "Route": "x" } ] }""", "without a Route or an AssetFile")]
    [InlineData("""{ "Version": 1 }""", "no Endpoints")]
    [InlineData("""[]""", "not valid JSON")]
    public void Parse_AManifestWithABadEndpoint_IsRefusedNamingTheFile(string json, string reason)
    {
        var error = Assert.Throws<InvalidDataException>(() => EndpointsManifest.Parse(ManifestFiles.Json(json), "Bad.staticwebassets.endpoints.json"));
        Assert.Contains("Bad.staticwebassets.endpoints.json", error.Message, StringComparison.Ordinal);
        Assert.Contains(reason, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_ARouteWithOnlyEncodedEndpoints_IsLeftOut()
    {
        var manifest = EndpointsManifest.Parse(ManifestFiles.Json("""
            { "Version": 1, "ManifestType": "Publish", "Endpoints": [
              { "Route": "a.js", "AssetFile": "a.js.gz", "Selectors": [ { "Name": "Content-Encoding", "Value": "gzip", "Quality": "0.5" } ], "ResponseHeaders": [], "EndpointProperties": [] } ] }
            """), "x");
        Assert.Empty(manifest.Routes);
    }
}
