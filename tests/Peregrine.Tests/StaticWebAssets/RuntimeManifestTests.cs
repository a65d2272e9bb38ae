using Peregrine.StaticWebAssets;

namespace Peregrine.Tests.StaticWebAssets;

public sealed class RuntimeManifestTests
{
    private static readonly RuntimeManifest s_blazor = RuntimeManifest.Load(ManifestFiles.BuildRuntime);

    private static AssetMount Single(string urlPath, string root)
        => Assert.Single(s_blazor.Mounts, m => m.UrlPath == urlPath && m.Root == root);

    [Fact]
    public void Blazor_AppWebRootPattern_MountsTheWholeFolderAtTheSiteRoot()
    {
        var mount = Single("/", "/fixture/BlazorApp/wwwroot");
        Assert.Null(mount.Files);
    }

    [Fact]
    public void Blazor_ClassLibraryPattern_MountsItsWebRootUnderContent()
    {
        var mount = Single("/_content/Lib", "/fixture/Lib/wwwroot");
        Assert.Null(mount.Files);
    }

    [Fact]
    public void Blazor_FrameworkScripts_MountThePackageFolderWithOnlyTheListedFiles()
    {
        var mount = Single("/_framework", "/fixture/nuget/microsoft.aspnetcore.app.internal.assets/10.0.12/_framework");
        Assert.Equal(["/blazor.server.js", "/blazor.web.js"], mount.Files!.Order(StringComparer.Ordinal));
    }

    [Fact]
    public void Blazor_ScopedCssBundle_MountsTheObjFolderWithTheBundleOnly()
    {
        var mount = Single("/", "/fixture/BlazorApp/obj/Debug/net10.0/scopedcss/bundle");
        Assert.Equal(["/BlazorApp.styles.css"], mount.Files);
    }

    [Fact]
    public void Blazor_ComponentModule_MountsItsProjectFolderWithTheModuleOnly()
    {
        // The content root is the project folder itself: only the listed file may be served.
        var mount = Single("/Components/Layout", "/fixture/BlazorApp/Components/Layout");
        Assert.Equal(["/ReconnectModal.razor.js"], mount.Files);
        Assert.DoesNotContain(s_blazor.Mounts, m => m.Root == "/fixture/BlazorApp" );
    }

    [Fact]
    public void Blazor_LibraryBundleUnderAFingerprintedName_IsMountedUnderItsDiskNameAndRenamed()
    {
        var mount = Single("/_content/Lib", "/fixture/Lib/obj/Debug/net10.0/scopedcss/projectbundle");
        Assert.Equal(["/Lib.bundle.scp.css"], mount.Files);
        Assert.Contains(new AssetRename("/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css", "/_content/Lib/Lib.bundle.scp.css"), s_blazor.Renames);
    }

    [Fact]
    public void Blazor_BuildCompressedCopies_AreMountedOneByOneAndRenamedToTheirUrl()
    {
        // MapStaticAssets answers /app.css.gz with the copy: it is a URL, found under its
        // generated name in obj/ and renamed, as the library bundle is.
        var copies = Single("/", "/fixture/BlazorApp/obj/Debug/net10.0/compressed");
        Assert.Contains("/hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz", copies.Files!);
        Assert.Contains(new AssetRename("/app.css.gz", "/hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz"), s_blazor.Renames);
        Assert.All(s_blazor.Mounts.Where(m => m.Root.EndsWith("/compressed", StringComparison.Ordinal)), m => Assert.NotNull(m.Files));
    }

    [Fact]
    public void Blazor_BuildCompressedCopies_AreFoundByTheirUrlPath()
    {
        Assert.Equal("/fixture/BlazorApp/obj/Debug/net10.0/compressed/hh92lrx13d-{0}-khy4lop6wu-khy4lop6wu.gz", s_blazor.EncodedFiles["/app.css.gz"]);
        Assert.DoesNotContain("/app.css", s_blazor.EncodedFiles.Keys);
    }

    [Fact]
    public void Blazor_FilesAlreadyUnderAPattern_AreNotMountedTwice()
    {
        // app.css and favicon.png are single assets of the app's wwwroot, which the root pattern serves.
        Assert.DoesNotContain(s_blazor.Mounts, m => m.Root == "/fixture/BlazorApp/wwwroot" && m.Files is not null);
        Assert.DoesNotContain(s_blazor.Mounts, m => m.Root == "/fixture/Lib/wwwroot" && m.Files is not null);
        Assert.Equal(6, s_blazor.Mounts.Count(m => !m.Root.EndsWith("/compressed", StringComparison.Ordinal)));
    }

    [Fact]
    public void Mounts_AtOneUrlPath_ListSingleFilesBeforePatterns()
    {
        var atContent = s_blazor.Mounts.Where(m => m.UrlPath == "/_content/Lib").ToList();
        Assert.Equal(3, atContent.Count);
        Assert.NotNull(atContent[0].Files);
        Assert.NotNull(atContent[1].Files);
        Assert.Null(atContent[2].Files);
    }

    [Fact]
    public void Mounts_AreListedLongestUrlPathFirst()
    {
        var lengths = s_blazor.Mounts.Select(m => m.UrlPath.Length).ToList();
        Assert.Equal(lengths.OrderDescending(), lengths);
    }

    [Theory]
    [InlineData("""{ "ContentRoots": ["/a/"], "Root": { "Children": { "..": { "Asset": { "ContentRootIndex": 0, "SubPath": "x" } } } } }""", "'..'")]
    [InlineData("""{ "ContentRoots": ["/a/"], "Root": { "Children": { "x": { "Asset": { "ContentRootIndex": 0, "SubPath": "../etc/passwd" } } } } }""", "not a plain path")]
    [InlineData("""{ "ContentRoots": ["/a/"], "Root": { "Children": { "x": { "Asset": { "ContentRootIndex": 3, "SubPath": "x" } } } } }""", "content root 3")]
    [InlineData("""{ "ContentRoots": ["/a/"] }""", "no ContentRoots or no Root")]
    [InlineData("""{ "ContentRoots": [""", "not valid JSON")]
    public void Parse_AManifestThatLeavesItsRoots_IsRefusedNamingTheFile(string json, string reason)
    {
        var error = Assert.Throws<InvalidDataException>(() => RuntimeManifest.Parse(ManifestFiles.Json(json), "Bad.staticwebassets.runtime.json"));
        Assert.Contains("Bad.staticwebassets.runtime.json", error.Message, StringComparison.Ordinal);
        Assert.Contains(reason, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_NestedAssetWithSubfolder_MountsTheFileFolderUnderTheUrlFolder()
    {
        var manifest = RuntimeManifest.Parse(ManifestFiles.Json("""
            { "ContentRoots": ["/pkg/"],
              "Root": { "Children": { "_content": { "Children": { "Pkg": { "Children": {
                  "css": { "Children": { "site.css": { "Asset": { "ContentRootIndex": 0, "SubPath": "dist/css/site.css" } } } } } } } } } } }
            """), "x");
        var mount = Assert.Single(manifest.Mounts);
        Assert.Equal(new AssetMount("/_content/Pkg/css", "/pkg/dist/css", mount.Files), mount);
        Assert.Equal(["/site.css"], mount.Files);
        Assert.Empty(manifest.Renames);
    }

    [Fact]
    public void Parse_AGlobOtherThanEverything_MountsTheFilesItMatchesNow()
    {
        using var tree = new Peregrine.Tests.Infrastructure.TempTree();
        tree.Write("a.js", "a");
        tree.Write("sub/b.js", "b");
        tree.Write("c.css", "c");
        var json = $$"""
            { "ContentRoots": [ "{{tree.Root}}/", "{{tree.Root}}/missing/" ],
              "Root": { "Children": { "pkg": { "Patterns": [ { "ContentRootIndex": 0, "Pattern": "**/*.js" }, { "ContentRootIndex": 1, "Pattern": "*.js" } ] } } } }
            """;
        var manifest = RuntimeManifest.Parse(ManifestFiles.Json(json), "x");
        Assert.Equal(
            [("/pkg", tree.Root, "/a.js"), ("/pkg/sub", tree.Root + "/sub", "/b.js")],
            manifest.Mounts.SelectMany(m => m.Files!.Select(f => (m.UrlPath, m.Root, f))).OrderBy(t => t.UrlPath, StringComparer.Ordinal));
    }
}
