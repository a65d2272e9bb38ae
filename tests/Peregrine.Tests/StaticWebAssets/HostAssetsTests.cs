using System.Net;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Primitives;
using Peregrine.StaticWebAssets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// What <c>AddPeregrine()</c> takes from the host (<see cref="HostAssets"/>), on an app laid out
/// by the test as <c>dotnet build</c> lays one out: a web root, a class library's web root, a
/// scoped CSS bundle under its disk name, framework scripts in a package folder that holds more
/// than the manifest lists, the build's compressed copies, and both manifests beside the app.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class HostAssetsTests : IDisposable
{
    private readonly TempTree _tree = new();

    public HostAssetsTests()
    {
        _tree.Write("App/wwwroot/app.css", "app { }");
        _tree.Write("Lib/wwwroot/lib.css", "lib { }");
        _tree.Write("Lib/obj/scopedcss/projectbundle/Lib.bundle.scp.css", "scoped { }");
        _tree.Write("packages/assets/_framework/blazor.web.js", "blazor();");
        _tree.Write("packages/assets/_framework/unlisted.js", "not listed");
        _tree.Write("App/obj/compressed/x1-{0}-abc.gz", "not gzip");
        var root = _tree.Root + "/";
        _tree.Write("bin/App.staticwebassets.runtime.json", $$"""
            { "ContentRoots": [ "{{root}}App/wwwroot/", "{{root}}App/obj/compressed/", "{{root}}packages/assets/_framework/", "{{root}}Lib/wwwroot/", "{{root}}Lib/obj/scopedcss/projectbundle/", "{{root}}Missing/" ],
              "Root": { "Children": {
                "app.css": { "Children": null, "Asset": { "ContentRootIndex": 0, "SubPath": "app.css" }, "Patterns": null },
                "app.css.gz": { "Children": null, "Asset": { "ContentRootIndex": 1, "SubPath": "x1-{0}-abc.gz" }, "Patterns": null },
                "_framework": { "Children": { "blazor.web.js": { "Children": null, "Asset": { "ContentRootIndex": 2, "SubPath": "blazor.web.js" }, "Patterns": null } }, "Asset": null, "Patterns": null },
                "_content": { "Children": {
                  "Lib": { "Children": { "Lib.fp12345678.bundle.scp.css": { "Children": null, "Asset": { "ContentRootIndex": 4, "SubPath": "Lib.bundle.scp.css" }, "Patterns": null } },
                           "Asset": null, "Patterns": [ { "ContentRootIndex": 3, "Pattern": "**", "Depth": 2 } ] },
                  "Gone": { "Children": null, "Asset": null, "Patterns": [ { "ContentRootIndex": 5, "Pattern": "**", "Depth": 2 } ] } },
                  "Asset": null, "Patterns": null } },
                "Asset": null, "Patterns": [ { "ContentRootIndex": 0, "Pattern": "**", "Depth": 0 } ] } }
            """);
        _tree.Write("bin/App.staticwebassets.endpoints.json", """
            { "Version": 1, "ManifestType": "Build", "Endpoints": [
              { "Route": "app.css.gz", "AssetFile": "app.css.gz", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "no-cache" }, { "Name": "Content-Encoding", "Value": "gzip" }, { "Name": "Content-Type", "Value": "text/css" } ] },
              { "Route": "_content/Lib/lib.zz9yy8xx7w.css", "AssetFile": "_content/Lib/lib.css", "Selectors": [], "EndpointProperties": [ { "Name": "fingerprint", "Value": "zz9yy8xx7w" } ],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" } ] },
              { "Route": "_content/Lib/Lib.bundle.scp.css", "AssetFile": "_content/Lib/Lib.fp12345678.bundle.scp.css", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "no-cache" } ] },
              { "Route": "_content/Lib/Lib.fp12345678.bundle.scp.css", "AssetFile": "_content/Lib/Lib.fp12345678.bundle.scp.css", "Selectors": [], "EndpointProperties": [],
                "ResponseHeaders": [ { "Name": "Cache-Control", "Value": "max-age=31536000, immutable" } ] } ] }
            """);
    }

    public void Dispose() => _tree.Dispose();

    private string Path(string relative) => System.IO.Path.Combine(_tree.Root, relative);

    private HostAssets Read(bool staticWebAssetsInUse = true, Dictionary<string, string?>? settings = null)
    {
        var environment = new Environment(staticWebAssetsInUse) { WebRootPath = Path("App/wwwroot") };
        var configuration = new ConfigurationBuilder().AddInMemoryCollection(settings ?? []).Build();
        return HostAssets.Read(environment, configuration, Path("App/wwwroot"), NullLogger.Instance, Path("bin"));
    }

    [Fact]
    public void Development_MountsTheFoldersBesideTheWebRoot_NotTheWebRootItselfNorWhatIsMissing()
    {
        var assets = Read();
        Assert.Equal(
            [("/_content/Lib", Path("Lib/obj/scopedcss/projectbundle")), ("/_content/Lib", Path("Lib/wwwroot")), ("/_framework", Path("packages/assets/_framework")), ("/", Path("App/obj/compressed"))],
            assets.Mounts.Select(m => (m.UrlPath, m.Root)));
    }

    [Fact]
    public void Development_BuildManifest_GoesOutWithNoCacheUnlessDevelopmentCachingIsOn()
    {
        Assert.Equal("no-cache", Assert.Single(Read().Routes.Aliases, a => a.Path == "/_content/Lib/lib.zz9yy8xx7w.css").CacheControl);
        var caching = Read(settings: new() { [HostAssets.DevelopmentCachingKey] = "true" });
        Assert.Equal("max-age=31536000, immutable", Assert.Single(caching.Routes.Aliases, a => a.Path == "/_content/Lib/lib.zz9yy8xx7w.css").CacheControl);
        var notReloading = Read(settings: new() { [HostAssets.ReloadAtRuntimeKey] = "false" });
        Assert.Equal("max-age=31536000, immutable", Assert.Single(notReloading.Routes.Aliases, a => a.Path == "/_content/Lib/lib.zz9yy8xx7w.css").CacheControl);
    }

    [Fact]
    public void WebRootWithoutStaticWebAssets_LeavesTheRuntimeManifestAlone()
    {
        // A published app, or one run outside Development: the host serves its web root alone.
        var assets = Read(staticWebAssetsInUse: false);
        Assert.Empty(assets.Mounts);
        Assert.NotEmpty(assets.Routes.Aliases);
    }

    [Fact]
    public async Task Development_EveryManifestPathAnswers_AndEditsShow()
    {
        var assets = Read();
        await using var host = await PeregrineHost.StartAsync(Path("App/wwwroot"), options =>
        {
            foreach (var mount in assets.Mounts)
            {
                options.Mounts.Add(new ContentMount { UrlPath = mount.UrlPath, Root = mount.Root, Files = mount.Files?.ToList() });
            }

            options.Routes = assets.Routes;
        });

        Assert.Equal("app { }", await host.Client.GetStringAsync("/app.css"));
        Assert.Equal("lib { }", await host.Client.GetStringAsync("/_content/Lib/lib.css"));
        Assert.Equal("lib { }", await host.Client.GetStringAsync("/_content/Lib/lib.zz9yy8xx7w.css"));
        Assert.Equal("blazor();", await host.Client.GetStringAsync("/_framework/blazor.web.js"));
        Assert.Equal("scoped { }", await host.Client.GetStringAsync("/_content/Lib/Lib.fp12345678.bundle.scp.css"));
        Assert.Equal("scoped { }", await host.Client.GetStringAsync("/_content/Lib/Lib.bundle.scp.css"));
        using (var unlisted = await host.Client.GetAsync("/_framework/unlisted.js"))
        {
            Assert.True(unlisted.Headers.Contains(PeregrineHost.NextHeader), "/_framework/unlisted.js was served.");
        }

        // The build's compressed copy, a route of its own: its stored bytes, under its route's
        // type and coding, as MapStaticAssets answers it.
        using (var copy = await host.Client.GetAsync("/app.css.gz"))
        {
            Assert.Equal(HttpStatusCode.OK, copy.StatusCode);
            Assert.Equal("not gzip", await copy.Content.ReadAsStringAsync());
            Assert.Equal("text/css", copy.Content.Headers.ContentType?.ToString());
            Assert.Equal(["gzip"], copy.Content.Headers.ContentEncoding);
        }

        // The bundle is rebuilt (dotnet watch writes it again) and the library's file edited.
        File.WriteAllText(Path("Lib/obj/scopedcss/projectbundle/Lib.bundle.scp.css"), "scoped { color: red; }");
        File.WriteAllText(Path("Lib/wwwroot/lib.css"), "lib { color: red; }");
        await Eventually(host, "/_content/Lib/Lib.fp12345678.bundle.scp.css", "scoped { color: red; }");
        await Eventually(host, "/_content/Lib/lib.zz9yy8xx7w.css", "lib { color: red; }");
        await Eventually(host, "/_content/Lib/lib.css", "lib { color: red; }");
    }

    private static async Task Eventually(PeregrineHost host, string path, string expected)
    {
        var seen = "";
        for (var attempt = 0; attempt < 200 && seen != expected; attempt++)
        {
            await Task.Delay(25);
            seen = await host.Client.GetStringAsync(path);
        }

        Assert.Equal(expected, seen);
    }

    /// <summary>A host environment whose web root includes static web assets as ASP.NET Core composes them (a provider of that name).</summary>
    private sealed class Environment(bool staticWebAssets) : IWebHostEnvironment
    {
        public string WebRootPath { get; set; } = "";

        public IFileProvider WebRootFileProvider { get; set; } = staticWebAssets
            ? new CompositeFileProvider(new NullFileProvider(), new ManifestStaticWebAssetFileProvider())
            : new NullFileProvider();

        public string ApplicationName { get; set; } = "App";

        public IFileProvider ContentRootFileProvider { get; set; } = new NullFileProvider();

        public string ContentRootPath { get; set; } = "";

        public string EnvironmentName { get; set; } = "Development";
    }

    /// <summary>Named as ASP.NET Core's own provider is.</summary>
    private sealed class ManifestStaticWebAssetFileProvider : IFileProvider
    {
        public IDirectoryContents GetDirectoryContents(string subpath) => NotFoundDirectoryContents.Singleton;

        public IFileInfo GetFileInfo(string subpath) => new NotFoundFileInfo(subpath);

        public IChangeToken Watch(string filter) => NullChangeToken.Singleton;
    }
}
