using System.Net;
using System.Text.RegularExpressions;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Peregrine as a drop-in for <c>MapStaticAssets</c> in apps made from the .NET templates
/// (<see cref="TemplateApps"/>), wired both ways, in Development (the build output, as <c>dotnet
/// run</c> runs it) and after <c>dotnet publish</c>: every local asset the page uses answers 200
/// from Peregrine (nothing went past it), and fingerprinted names carry the manifest's caching.
/// </summary>
[Collection(TemplateAppsCollection.Name)]
public sealed partial class TemplateAppTests(TemplateApps apps)
{
    public static TheoryData<string, bool, string> Matrix()
    {
        var data = new TheoryData<string, bool, string>();
        foreach (var app in (string[])["BlazorApp", "PagesApp"])
        {
            foreach (var published in (bool[])[false, true])
            {
                foreach (var wiring in (string[])["keep", "swap"])
                {
                    data.Add(app, published, wiring);
                }
            }
        }

        return data;
    }

    private Task<AppProcess> Start(string app, bool published, string wiring, IReadOnlyDictionary<string, string>? settings = null)
        => published
            ? AppProcess.StartAsync(Path.Combine(apps.Published(app), app + ".dll"), apps.Published(app), "Production", wiring, settings)
            : AppProcess.StartAsync(Path.Combine(apps.Built(app), app + ".dll"), apps.Project(app), "Development", wiring, settings);

    [Theory]
    [MemberData(nameof(Matrix))]
    public async Task EveryAssetThePageUses_AnswersFromPeregrine(string app, bool published, string wiring)
    {
        using var process = await Start(app, published, wiring);
        var assets = await AssetsOfPage(process);

        // The page links what the issue lists: the framework script, the library's stylesheet,
        // the scoped CSS bundle (and through it the library's bundle).
        Assert.Contains(assets, a => a.StartsWith("/_content/Lib/lib.", StringComparison.Ordinal));
        Assert.Contains(assets, a => a.StartsWith("/" + app + ".", StringComparison.Ordinal) && a.EndsWith(".styles.css", StringComparison.Ordinal));
        Assert.Contains(assets, a => a.StartsWith("/_content/Lib/Lib.", StringComparison.Ordinal) && a.EndsWith(".bundle.scp.css", StringComparison.Ordinal));
        if (app == "BlazorApp")
        {
            Assert.Contains(assets, a => a.StartsWith("/_framework/blazor.web.", StringComparison.Ordinal));
            Assert.Contains(assets, a => a.StartsWith("/Components/Layout/ReconnectModal.", StringComparison.Ordinal));
        }

        foreach (var asset in assets)
        {
            await AssertFromPeregrine(process, asset);
        }
    }

    [Theory]
    [InlineData("BlazorApp", "/_framework/blazor.web.js")]
    [InlineData("BlazorApp", "/BlazorApp.styles.css")]
    [InlineData("BlazorApp", "/Components/Layout/ReconnectModal.razor.js")]
    [InlineData("BlazorApp", "/_content/Lib/lib.css")]
    [InlineData("BlazorApp", "/_content/Lib/background.png")]
    [InlineData("PagesApp", "/PagesApp.styles.css")]
    [InlineData("PagesApp", "/_content/Lib/exampleJsInterop.js")]
    public async Task Development_PlainNamesOfTheRuntimeManifest_AnswerFromPeregrine(string app, string path)
    {
        using var process = await Start(app, published: false, "swap");
        await AssertFromPeregrine(process, path);
    }

    [Theory]
    [InlineData(false, "swap")]
    [InlineData(true, "swap")]
    [InlineData(true, "keep")]
    public async Task FingerprintedName_CarriesTheManifestsCaching(bool published, string wiring)
    {
        using var process = await Start("BlazorApp", published, wiring);
        var fingerprinted = Fingerprinted(published);
        using var response = await AssertFromPeregrine(process, fingerprinted);

        // A build manifest's routes go out with no-cache, as MapStaticAssets sends them (a file
        // edited after the build keeps its fingerprinted name); a published one's as stated.
        Assert.Equal(published ? "max-age=31536000, immutable" : "no-cache", ManifestFiles.CacheControl(response));
    }

    [Fact]
    public async Task Development_WithDevelopmentCachingOn_SendsTheManifestsImmutable()
    {
        using var process = await Start("BlazorApp", published: false, "swap", new Dictionary<string, string> { ["EnableStaticAssetsDevelopmentCaching"] = "true" });
        using var response = await AssertFromPeregrine(process, Fingerprinted(published: false));
        Assert.Equal("max-age=31536000, immutable", ManifestFiles.CacheControl(response));
    }

    [Fact]
    public async Task Published_BrotliAnswer_IsTheSidecarPublishWrote()
    {
        using var process = await Start("BlazorApp", published: true, "swap");
        var sidecar = await File.ReadAllBytesAsync(Path.Combine(apps.Published("BlazorApp"), "wwwroot", "_framework", "blazor.web.js.br"));

        // Variants are published after the index; the first brotli answer is the one compared.
        byte[]? body = null;
        for (var attempt = 0; attempt < 200 && body is null; attempt++)
        {
            using var request = new HttpRequestMessage(HttpMethod.Get, "/_framework/blazor.web.js");
            request.Headers.TryAddWithoutValidation("Accept-Encoding", "br");
            using var response = await process.Client.SendAsync(request);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            if (response.Content.Headers.ContentEncoding.Contains("br"))
            {
                body = await response.Content.ReadAsByteArrayAsync();
            }
            else
            {
                await Task.Delay(50);
            }
        }

        Assert.NotNull(body);
        Assert.Equal(sidecar, body);
    }

    [Theory]
    [InlineData(true, "/_framework/blazor.web.js.br", "br")]
    [InlineData(true, "/app.css.gz", "gzip")]
    [InlineData(false, "/_framework/blazor.web.js.gz", "gzip")]
    [InlineData(false, "/app.css.gz", "gzip")]
    public async Task EncodedFileRoute_AnswersFromPeregrineWithItsCoding(bool published, string path, string coding)
    {
        using var process = await Start("BlazorApp", published, "swap");
        using var response = await AssertFromPeregrine(process, path);
        Assert.Equal([coding], response.Content.Headers.ContentEncoding);
    }

    [Fact]
    public async Task Development_EditsToTheFoldersTheManifestNames_AreServed()
    {
        using var process = await Start("BlazorApp", published: false, "swap");
        var manifest = Peregrine.StaticWebAssets.EndpointsManifest.Load(Path.Combine(apps.Built("BlazorApp"), "BlazorApp.staticwebassets.endpoints.json"));
        var fingerprintedLib = manifest.Routes.Single(r => r.AssetPath == "/_content/Lib/lib.css" && r.Properties.ContainsKey("fingerprint") && !r.IsEncodedFile).Path;
        var stamp = Guid.NewGuid().ToString("N");

        // The app's wwwroot, the class library's wwwroot, and the scoped CSS bundle that
        // dotnet watch writes again when a .razor.css changes. The apps are shared by every
        // test of the class: each file gets its bytes and time back, so that the build's
        // manifest describes it again for the tests that follow.
        var appCss = Path.Combine(apps.Project("BlazorApp"), "wwwroot", "app.css");
        var libCss = Path.Combine(apps.Project("Lib"), "wwwroot", "lib.css");
        var bundle = Path.Combine(apps.Project("BlazorApp"), "obj", "Debug", "net10.0", "scopedcss", "bundle", "BlazorApp.styles.css");
        var originals = new[] { appCss, libCss, bundle }.Select(path => (Path: path, Bytes: File.ReadAllBytes(path), Time: File.GetLastWriteTimeUtc(path))).ToList();
        try
        {
            File.WriteAllText(appCss, $"/* {stamp} */");
            File.WriteAllText(libCss, $"/* lib {stamp} */");
            File.WriteAllText(bundle, $"/* bundle {stamp} */");

            await Eventually(process, "/app.css", $"/* {stamp} */");
            await Eventually(process, Fingerprinted(published: false), $"/* {stamp} */");
            await Eventually(process, "/_content/Lib/lib.css", $"/* lib {stamp} */");
            await Eventually(process, fingerprintedLib, $"/* lib {stamp} */");
            await Eventually(process, "/BlazorApp.styles.css", $"/* bundle {stamp} */");
        }
        finally
        {
            foreach (var (path, bytes, time) in originals)
            {
                File.WriteAllBytes(path, bytes);
                File.SetLastWriteTimeUtc(path, time);
            }
        }
    }

    /// <summary>Polls <paramref name="path"/> until it answers <paramref name="expected"/> from Peregrine, for up to 10 s.</summary>
    private static async Task Eventually(AppProcess process, string path, string expected)
    {
        var seen = "";
        for (var attempt = 0; attempt < 200 && seen != expected; attempt++)
        {
            await Task.Delay(50);
            using var response = await process.Client.GetAsync(path);
            Assert.False(response.Headers.Contains(TemplateApps.PastPeregrine), $"{path} went past Peregrine.");
            seen = await response.Content.ReadAsStringAsync();
        }

        Assert.Equal(expected, seen);
    }

    /// <summary>A fingerprinted route of app.css, read from the manifest the mode uses.</summary>
    private string Fingerprinted(bool published)
    {
        var manifest = Peregrine.StaticWebAssets.EndpointsManifest.Load(published
            ? Path.Combine(apps.Published("BlazorApp"), "BlazorApp.staticwebassets.endpoints.json")
            : Path.Combine(apps.Built("BlazorApp"), "BlazorApp.staticwebassets.endpoints.json"));
        return manifest.Routes.Single(r => r.AssetPath == "/app.css" && r.Properties.ContainsKey("fingerprint") && !r.IsEncodedFile).Path;
    }

    private static async Task<HttpResponseMessage> AssertFromPeregrine(AppProcess process, string path)
    {
        var response = await process.Client.GetAsync(path);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{path}: {(int)response.StatusCode}\n{process.Output}");
        Assert.False(response.Headers.Contains(TemplateApps.PastPeregrine), $"{path} went past Peregrine.");

        // Peregrine sends the manifest's tag, as MapStaticAssets does, while it names the bytes
        // (StockComparisonTests): the marker above is what shows who answered.
        Assert.NotNull(response.Headers.ETag);
        return response;
    }

    /// <summary>The local assets the home page uses: stylesheets, icons, scripts, import map entries, and what the stylesheets import.</summary>
    private static async Task<List<string>> AssetsOfPage(AppProcess process)
    {
        var html = await process.Client.GetStringAsync("/");
        var found = new List<string>();
        foreach (Match match in LinkedAsset().Matches(html))
        {
            found.Add(match.Groups["url"].Value);
        }

        foreach (Match match in ImportMapEntry().Matches(html))
        {
            found.Add(match.Groups["url"].Value);
        }

        var assets = found
            .Where(url => !url.StartsWith("http", StringComparison.Ordinal) && !url.StartsWith("//", StringComparison.Ordinal))
            .Select(url => new Uri(new Uri("http://x/"), WebUtility.HtmlDecode(url)).AbsolutePath)
            .Distinct(StringComparer.Ordinal)
            .ToList();
        foreach (var css in assets.Where(a => a.EndsWith(".css", StringComparison.Ordinal)).ToList())
        {
            var text = await process.Client.GetStringAsync(css);
            foreach (Match match in CssImport().Matches(text))
            {
                var imported = new Uri(new Uri("http://x" + css), match.Groups["url"].Value).AbsolutePath;
                if (!assets.Contains(imported))
                {
                    assets.Add(imported);
                }
            }
        }

        return assets;
    }

    [GeneratedRegex(@"<(?:link[^>]*\bhref|script[^>]*\bsrc)=""(?<url>[^""#]+)""")]
    private static partial Regex LinkedAsset();

    [GeneratedRegex(@"""(?:\./|/)[^""]+""\s*:\s*""(?<url>(?:\./|/)[^""]+)""")]
    private static partial Regex ImportMapEntry();

    [GeneratedRegex(@"@import\s+(?:url\()?['""](?<url>[^'""]+)['""]")]
    private static partial Regex CssImport();
}
