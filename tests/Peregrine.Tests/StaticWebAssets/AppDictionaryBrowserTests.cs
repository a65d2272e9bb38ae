using System.Diagnostics;
using System.Security.Cryptography;
using System.Text.RegularExpressions;
using Peregrine.Tests.Compression;
using Peregrine.Tests.Infrastructure;
using Xunit.Abstractions;
using static Peregrine.Tests.Compression.DictionaryDeltaTests;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Compression dictionaries in a real browser for an app with the library: a Razor Pages app
/// made as <see cref="FreshApps"/> makes it (<c>dotnet new webapp</c>, the package, the keep
/// wiring), given a cache folder for kept versions as docs/library.md says, is published and run.
/// Headless Chromium with a persistent profile opens its home page, whose <c>~/css/site.css</c>
/// and <c>~/js/site.js</c> resolve to fingerprinted routes that announce <c>Use-As-Dictionary</c>.
/// A release changes both files, is published, and runs in the first one's place (the same
/// folder, the same cache folder; a port of its own behind the one origin the browser knows, as
/// behind a reverse proxy: Chromium keeps a dictionary for its origin); on the second visit
/// the browser receives both as dcz and decodes them to the new bytes (Resource Timing's sizes,
/// and the SHA-256 of what the page reads). The standalone server's and the bucket's versions
/// are <see cref="DictionaryBrowserTests"/> and <c>BucketDictionaryBrowserTests</c>.
/// </summary>
[Collection(FreshAppsCollection.Name)]
public sealed class AppDictionaryBrowserTests(FreshApps apps, ITestOutputHelper output)
{
    /// <summary>The app's own stylesheet and script, which the template's layout links with <c>asp-append-version</c>.</summary>
    private static readonly Asset[] Assets = [new("css/site", "css"), new("js/site", "js")];

    [ChromiumFact(AndZstd = true)]
    public async Task PagesApp_NextRelease_SecondVisitGetsTheChangedCssAndJsAsDcz()
    {
        var started = Stopwatch.GetTimestamp();
        var work = Path.Combine(apps.Folder, "dictionaries-" + Guid.NewGuid().ToString("N")[..8]);

        // Release 1 is published here, release 2 beside it and then moved here: the kept versions
        // are filed under the web root's path, which must stay the same from release to release
        // (docs/library.md).
        var site = Path.Combine(work, "site");
        var cache = Path.Combine(work, "cache");
        try
        {
            // :: release 1: the app as a user makes it, with the cache folder library.md shows.
            var project = apps.MakeIn(work, "PagesApp");
            TemplateApps.Edit(Path.Combine(project, "Program.cs"), $"builder.Services.AddPeregrine(o => o.Headers[\"{FreshApps.ConfiguredHeader}\"] = \"nosniff\");", $$"""
                builder.Services.AddPeregrine(o =>
                {
                    o.Headers["{{FreshApps.ConfiguredHeader}}"] = "nosniff";
                    o.Compression.CacheDirectory = @"{{cache}}";
                });
                """);
            Publish(project, site);
            Log(started, "release 1 made and published");
            var old = Files(site);

            using var browser = await HeadlessChromium.StartAsync();
            using var front = new LoopbackForwarder(0);
            Dictionary<Asset, string> oldRoutes;
            using (var first = await StartAsync(site))
            {
                front.SwitchTo(first.Client.BaseAddress!.Port);
                oldRoutes = await RoutesAsync(first);

                // :: first visit: both files arrive marked as dictionaries for their later builds.
                await browser.NavigateAsync(new Uri(front.Address, "/"));
                foreach (var asset in Assets)
                {
                    var marked = browser.Responses.LastOrDefault(r => r.Url.EndsWith(oldRoutes[asset], StringComparison.Ordinal));
                    var announced = marked is null ? null : DictionaryBrowserTests.Field(marked, "use-as-dictionary");
                    Assert.True(announced == $"match=\"{asset.Pattern}\"", $"{oldRoutes[asset]} announced {announced ?? "nothing"} on the first visit.\n{Describe(browser, first)}");
                }

                // The app keeps the versions in force as it indexes them, and saves them to the
                // cache folder; Chromium stores a dictionary once it has read the body.
                await KeptAsync(cache, first);
                await Task.Delay(1000);
                Log(started, "first visit");

                // :: release 2: a small change to both files, as a release makes, published while
                // release 1 still runs; then release 1 stops.
                File.AppendAllText(Path.Combine(project, "wwwroot", "css", "site.css"), "\n.release-note {\n  margin-top: 1rem;\n  color: #5a5a5a;\n}\n");
                File.AppendAllText(Path.Combine(project, "wwwroot", "js", "site.js"), "\ndocument.documentElement.dataset.release = '2';\n");
                Publish(project, Path.Combine(work, "release-2"));
                Log(started, "release 2 published");
            }

            Directory.Delete(site, recursive: true);
            Directory.Move(Path.Combine(work, "release-2"), site);
            var @new = Files(site);
            using var second = await StartAsync(site);
            var newRoutes = await RoutesAsync(second);
            foreach (var asset in Assets)
            {
                Assert.NotEqual(oldRoutes[asset], newRoutes[asset]);
                await DeltaReadyAsync(second, newRoutes[asset], old[asset]);
            }

            Log(started, "release 2 answers dcz against release 1");

            // :: second visit: the same profile, the same origin, now release 2 behind it.
            front.SwitchTo(second.Client.BaseAddress!.Port);
            await browser.NavigateAsync(new Uri(front.Address, "/"));
            foreach (var asset in Assets)
            {
                var seen = await DictionaryBrowserTests.ReadAsync(browser, newRoutes[asset]);
                var brotli = await OrdinaryLengthAsync(second, newRoutes[asset]);
                output.WriteLine($"{newRoutes[asset]}: {seen.Encoding}, {seen.Encoded} B on the wire, {seen.Decoded} B decoded; the file {@new[asset].Length} B, br {brotli} B");
                var context = $"{newRoutes[asset]}: browser saw {seen}, br is {brotli} B.\n{Describe(browser, second)}";
                Assert.True(seen.Encoding == "dcz", context);
                Assert.True(seen.Decoded == @new[asset].Length, context);
                Assert.True(seen.Encoded > 0 && seen.Encoded < brotli && seen.Encoded * 2 < seen.Decoded, context);
                Assert.True(Convert.ToHexStringLower(SHA256.HashData(@new[asset])) == seen.Sha256, context);
            }

            Log(started, "second visit");
        }
        finally
        {
            try
            {
                Directory.Delete(work, recursive: true);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                // FreshApps removes its whole folder when the run ends.
            }
        }
    }

    private void Log(long started, string what) => output.WriteLine($"{Stopwatch.GetElapsedTime(started).TotalSeconds,6:F1} s  {what}");

    private static void Publish(string project, string to)
        => TemplateApps.Dotnet(project, "publish", "-c", "Release", "-o", to, "-nodeReuse:false", "-p:UseSharedCompilation=false");

    private static Task<AppProcess> StartAsync(string site)
        => AppProcess.StartAsync(Path.Combine(site, "PagesApp.dll"), site, "Production", "keep");

    /// <summary>The bytes of each asset as published in <paramref name="site"/>.</summary>
    private static Dictionary<Asset, byte[]> Files(string site)
        => Assets.ToDictionary(asset => asset, asset => File.ReadAllBytes(Path.Combine(site, "wwwroot", asset.File)));

    /// <summary>The fingerprinted route the home page links for each asset (<c>/css/site.{fingerprint}.css</c>).</summary>
    private static async Task<Dictionary<Asset, string>> RoutesAsync(AppProcess app)
    {
        var page = await app.Client.GetStringAsync("/");
        var routes = new Dictionary<Asset, string>();
        foreach (var asset in Assets)
        {
            var found = Regex.Match(page, $"\"(/{Regex.Escape(asset.Stem)}\\.[a-z0-9]+\\.{asset.Extension})\"");
            Assert.True(found.Success, $"The home page links no {asset.Pattern}:\n{page}");
            routes[asset] = found.Groups[1].Value;
        }

        return routes;
    }

    /// <summary>Waits until the cache folder holds the kept versions of both assets, as the app saved them.</summary>
    private static async Task KeptAsync(string cache, AppProcess app)
    {
        var patterns = Assets.Select(asset => asset.Pattern).ToList();
        var bound = Stopwatch.GetTimestamp();
        while (true)
        {
            var lines = Directory.Exists(cache)
                ? Directory.EnumerateFiles(cache, "kept.v1", SearchOption.AllDirectories).SelectMany(File.ReadLines).ToList()
                : [];
            if (patterns.All(pattern => lines.Any(line => line.EndsWith(" " + pattern, StringComparison.Ordinal))))
            {
                return;
            }

            Assert.True(Stopwatch.GetElapsedTime(bound) < TimeSpan.FromSeconds(60), $"The cache folder holds no kept versions of {string.Join(" and ", patterns)} after 60 s: {string.Join(" | ", lines)}\n{app.Output}");
            await Task.Delay(200);
        }
    }

    /// <summary>Waits until <paramref name="route"/> answers a client that holds <paramref name="old"/> with dcz.</summary>
    private static async Task DeltaReadyAsync(AppProcess app, string route, byte[] old)
    {
        using var guard = new HangGuard(TimeSpan.FromSeconds(60));
        while (true)
        {
            using var response = await app.Client.SendAsync(Request(HttpMethod.Get, route, Hash(old), "gzip, br, zstd, dcz"), guard.Token);
            if (response.Content.Headers.ContentEncoding.Contains("dcz"))
            {
                return;
            }

            await Task.Delay(100, guard.Token);
        }
    }

    /// <summary>The length of what a browser without a dictionary gets for <paramref name="route"/> (the build's br).</summary>
    private static async Task<long> OrdinaryLengthAsync(AppProcess app, string route)
    {
        using var response = await app.Client.SendAsync(Request(HttpMethod.Get, route, hash: null, "gzip, br, zstd"));
        return (await response.Content.ReadAsByteArrayAsync()).Length;
    }

    private static string Describe(HeadlessChromium browser, AppProcess app)
        => $"responses: {string.Join(", ", browser.Responses.Select(r => $"{r.Url} {r.Status} {r.Headers.GetValueOrDefault("content-encoding", "-")}"))}\nerrors: {string.Join(" | ", browser.Errors)}\napp:\n{app.Output}";

    /// <param name="Stem">The file's path in wwwroot without its extension (<c>css/site</c>).</param>
    private sealed record Asset(string Stem, string Extension)
    {
        public string File => Stem + "." + Extension;

        /// <summary>What its fingerprinted route announces: <c>/css/site.*.css</c>.</summary>
        public string Pattern => "/" + Stem + ".*." + Extension;
    }
}
