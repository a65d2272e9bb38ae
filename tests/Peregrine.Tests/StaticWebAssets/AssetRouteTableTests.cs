using Peregrine.StaticWebAssets;

namespace Peregrine.Tests.StaticWebAssets;

public sealed class AssetRouteTableTests
{
    private static readonly EndpointsManifest s_build = EndpointsManifest.Load(ManifestFiles.BuildEndpoints);
    private static readonly EndpointsManifest s_publish = EndpointsManifest.Load(ManifestFiles.PublishEndpoints);
    private static readonly RuntimeManifest s_runtime = RuntimeManifest.Load(ManifestFiles.BuildRuntime);

    private static RouteAlias Alias(AssetRouteTable table, string path) => Assert.Single(table.Aliases, a => a.Path == path);

    private static (string Path, string Target, string? CacheControl) Parts(RouteAlias alias) => (alias.Path, alias.Target, alias.CacheControl);

    [Fact]
    public void Publish_FingerprintedRoute_IsAnAliasOfItsFileWithImmutableCaching()
    {
        var table = AssetRouteTable.Create(s_publish, [], manifestCaching: true);
        Assert.Equal(("/app.khy4lop6wu.css", "/app.css", "max-age=31536000, immutable"), Parts(Alias(table, "/app.khy4lop6wu.css")));
        Assert.Equal(("/_framework/blazor.web.9hsif5t8mt.js", "/_framework/blazor.web.js", "max-age=31536000, immutable"), Parts(Alias(table, "/_framework/blazor.web.9hsif5t8mt.js")));
        Assert.Contains(table.AliasesOf("/app.css"), a => a.Path == "/app.khy4lop6wu.css");
    }

    [Fact]
    public void Publish_PlainRoute_GivesItsFileTheStatedCacheControl()
    {
        var table = AssetRouteTable.Create(s_publish, [], manifestCaching: true);
        Assert.Equal("no-cache", table.CacheControlFor("/app.css"));
        Assert.Equal("max-age=3600, must-revalidate", table.CacheControlFor("/_content/Lib/background.png"));
        Assert.Null(table.CacheControlFor("/not-in-the-manifest.css"));
    }

    [Fact]
    public void Publish_EncodedFileRoutes_AreRoutesThatStateTheirCoding()
    {
        // MapStaticAssets maps /app.css.br and answers it with the stored bytes under
        // Content-Encoding: br and the type of app.css, whatever the request accepts.
        var table = AssetRouteTable.Create(s_publish, [], manifestCaching: true);
        var own = table.StatedFor("/app.css.br")!;
        Assert.Equal(("br", "text/css", "no-cache"), (own.ContentEncoding, own.ContentType, own.CacheControl));
        var fingerprinted = Alias(table, "/app.khy4lop6wu.css.br");
        Assert.Equal(("/app.css.br", "br", "max-age=31536000, immutable"), (fingerprinted.Target, fingerprinted.Stated!.ContentEncoding, fingerprinted.CacheControl));
        Assert.Null(table.StatedFor("/app.css")!.ContentEncoding);
    }

    [Theory]
    [InlineData("/APP.css", "/app.css")]
    [InlineData("/App.KHY4LOP6WU.css", "/app.khy4lop6wu.css")]
    [InlineData("/_FRAMEWORK/Blazor.Web.js.BR", "/_framework/blazor.web.js.br")]
    [InlineData("/app.css", "/app.css")]
    public void RouteInAnotherCase_IsFoundAsTheRoute(string requested, string route)
    {
        var table = AssetRouteTable.Create(s_publish, [], manifestCaching: true);
        Assert.True(table.TryFindRoute(requested, out var found));
        Assert.Equal(route, found);
    }

    [Theory]
    [InlineData("/app.cs")]
    [InlineData("/app.css/")]
    [InlineData("/not-in-the-manifest.css")]
    public void PathNoRouteNames_IsNotFoundIgnoringCase(string requested)
    {
        var table = AssetRouteTable.Create(s_publish, [], manifestCaching: true);
        Assert.False(table.TryFindRoute(requested, out _));
    }

    [Fact]
    public void Build_WithoutDevelopmentCaching_SendsNoCacheOnEveryRoute()
    {
        // As MapStaticAssets does for a build manifest: a file edited after the build keeps its
        // fingerprinted URL, which must not stay in a browser's cache for a year.
        var table = AssetRouteTable.Create(s_build, s_runtime.Renames, manifestCaching: false);
        var routes = table.Aliases.Where(a => s_build.Routes.Any(r => r.Path == a.Path)).ToList();
        Assert.True(routes.Count >= 8, $"{routes.Count} aliased routes");
        Assert.All(routes, a => Assert.Equal("no-cache", a.CacheControl));
        Assert.Equal("no-cache", table.CacheControlFor("/_content/Lib/background.png"));
    }

    [Fact]
    public void Build_RenamedLibraryBundle_ResolvesBothRoutesToTheFileOnDisk()
    {
        var table = AssetRouteTable.Create(s_build, s_runtime.Renames, manifestCaching: true);

        // The fingerprinted name the styles bundle imports answers with the file under its disk name...
        Assert.Equal(("/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css", "/_content/Lib/Lib.bundle.scp.css", "max-age=31536000, immutable"), Parts(Alias(table, "/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css")));

        // ...and the plain name's route, whose asset is the fingerprinted name, is that same file.
        Assert.Equal("no-cache", table.CacheControlFor("/_content/Lib/Lib.bundle.scp.css"));
        Assert.DoesNotContain(table.Aliases, a => a.Path == "/_content/Lib/Lib.bundle.scp.css");
    }

    [Fact]
    public void RenamesWithoutAnEndpointsManifest_StillAnswerUnderTheirUrlName()
    {
        var table = AssetRouteTable.Create(null, s_runtime.Renames, manifestCaching: true);
        Assert.Equal(("/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css", "/_content/Lib/Lib.bundle.scp.css", null), Parts(Alias(table, "/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css")));
        Assert.Equal(("/app.css.gz", "/hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz", null), Parts(Alias(table, "/app.css.gz")));
        Assert.Equal(s_runtime.Renames.Count, table.Aliases.Count);
    }

    [Fact]
    public void Empty_HasNothingToAdd()
    {
        Assert.True(AssetRouteTable.Empty.IsEmpty);
        Assert.Empty(AssetRouteTable.Empty.AliasesOf("/app.css"));
        Assert.False(AssetRouteTable.Create(s_publish, [], true).IsEmpty);
    }
}
