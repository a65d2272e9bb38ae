using System.Net;
using Peregrine.StaticWebAssets;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// A template app, started stock (MapStaticAssets alone), with Peregrine in its place (swap),
/// and with Peregrine before it (keep): every route of its endpoints manifest, the encoded
/// files' routes (<c>/app.css.br</c>) included, answers with the same Cache-Control,
/// Content-Type, ETag, Vary, Content-Encoding and length, with and without
/// <c>Accept-Encoding: br, gzip</c>, and in upper case: published in Production (Brotli and gzip sidecars, the
/// smallest sent even where it saves a few bytes), and built in Development (the build's gzip
/// copies in obj/, sent for every file however small, under the manifest's tags).
/// bench/staticassets/headers.py prints the same comparison as a table.
/// </summary>
[Collection(TemplateAppsCollection.Name)]
public sealed class StockComparisonTests(TemplateApps apps)
{
    private static readonly string[] Fields = ["Cache-Control", "Content-Type", "ETag", "Vary", "Content-Encoding", "Content-Length"];

    [Theory]
    [InlineData("BlazorApp")]
    [InlineData("PagesApp")]
    public async Task PublishedApp_EveryRoute_AnswersWithStocksFields(string app)
    {
        var folder = apps.Published(app);
        await CompareAsync(Path.Combine(folder, app + ".dll"), folder, folder, "Production");
    }

    [Theory]
    [InlineData("BlazorApp")]
    [InlineData("PagesApp")]
    public async Task DevelopmentApp_EveryRoute_AnswersWithStocksFields(string app)
    {
        var built = apps.Built(app);

        // MapStaticAssets 10.0 in Development takes a file whose time has a fraction of a second
        // (every file dotnet new writes) for one changed since the build, whose manifest states
        // whole seconds, and then compresses it again on each request instead of sending the
        // build's copy. Whole-second times are what the manifest says: stock sends its manifest.
        WholeSecondTimes(built + "/" + app + ".staticwebassets.runtime.json");
        await CompareAsync(Path.Combine(built, app + ".dll"), apps.Project(app), built, "Development");
    }

    private static async Task CompareAsync(string dll, string workingDirectory, string manifestFolder, string environment)
    {
        var app = Path.GetFileNameWithoutExtension(dll);
        var manifest = EndpointsManifest.Load(Path.Combine(manifestFolder, app + ".staticwebassets.endpoints.json"));
        var routes = manifest.Routes.Select(route => route.Path).ToList();
        var fingerprinted = manifest.Routes.Where(route => route.Properties.ContainsKey("fingerprint") && !route.IsEncodedFile).Select(route => route.Path).ToHashSet(StringComparer.Ordinal);
        using var stock = await AppProcess.StartAsync(dll, workingDirectory, environment, "stock");
        foreach (var wiring in (string[])["swap", "keep"])
        {
            using var own = await AppProcess.StartAsync(dll, workingDirectory, environment, wiring);
            await CompareAsync(stock, own, wiring, routes, fingerprinted);
        }
    }

    /// <summary>
    /// Every route, with and without <c>br, gzip</c>, and in upper case (endpoint routing
    /// matches MapStaticAssets' routes ignoring case): the same fields from both apps. Peregrine
    /// announces a compression dictionary (Use-As-Dictionary) on routes the manifest says are
    /// fingerprinted, on some of them at least, and on no other.
    /// </summary>
    private static async Task CompareAsync(AppProcess stock, AppProcess own, string wiring, List<string> routes, HashSet<string> fingerprinted)
    {
        var announced = 0;
        var compared = 0;
        var encoded = 0;
        var encodedFiles = 0;
        var differences = new List<string>();
        foreach (var path in routes)
        {
            var stockIdentity = await FieldsAsync(stock, path, null);
            var stockEncoded = await FieldsAsync(stock, path, "br, gzip");
            var ownIdentity = await FieldsAsync(own, path, null);
            var ownEncoded = await EncodedAsync(own, path, stockEncoded["Content-Encoding"]);
            var upper = path.ToUpperInvariant();
            var stockUpper = await FieldsAsync(stock, upper, null);
            var ownUpper = await FieldsAsync(own, upper, null);

            Compare($"{path} ({wiring})", "no Accept-Encoding", stockIdentity, ownIdentity, differences);
            Compare($"{path} ({wiring})", "br, gzip", stockEncoded, ownEncoded, differences);
            Compare($"{upper} ({wiring})", "no Accept-Encoding", stockUpper, ownUpper, differences);
            if (ownIdentity[RouteAnswers.UseAsDictionary] is not null)
            {
                announced++;
                if (!fingerprinted.Contains(path))
                {
                    differences.Add($"{path} ({wiring}): announces a dictionary, but the manifest does not say it is fingerprinted");
                }
            }

            compared += 3;
            encoded += stockEncoded["Content-Encoding"] is null ? 0 : 1;
            encodedFiles += stockIdentity["Content-Encoding"] is null ? 0 : 1;
        }

        Assert.True(compared >= 60, $"only {compared} answers compared: the manifest lists {routes.Count} routes");
        Assert.True(encoded >= 10, $"only {encoded} answers of stock were encoded");
        Assert.True(encodedFiles >= 10, $"only {encodedFiles} routes of stock answered with an encoded file");
        Assert.True(!Interop.LibZstd.IsUsable || announced >= 3, $"only {announced} routes announced a dictionary; the manifest says {fingerprinted.Count} are fingerprinted");
        Assert.True(differences.Count == 0, string.Join(Environment.NewLine, differences));
    }

    /// <summary>Sets the time of each file in the runtime manifest's content roots to its whole second, outside the NuGet cache.</summary>
    private void WholeSecondTimes(string runtimeManifest)
    {
        using var json = System.Text.Json.JsonDocument.Parse(File.ReadAllBytes(runtimeManifest));
        var mine = Path.GetFullPath(apps.Folder) + Path.DirectorySeparatorChar;
        foreach (var root in json.RootElement.GetProperty("ContentRoots").EnumerateArray().Select(r => Path.GetFullPath(r.GetString()!)))
        {
            if (!root.StartsWith(mine, StringComparison.Ordinal) || !Directory.Exists(root))
            {
                continue;
            }

            foreach (var file in Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories))
            {
                var time = File.GetLastWriteTimeUtc(file);
                File.SetLastWriteTimeUtc(file, time.AddTicks(-(time.Ticks % TimeSpan.TicksPerSecond)));
            }
        }
    }

    private static void Compare(string path, string request, Dictionary<string, string?> stock, Dictionary<string, string?> own, List<string> differences)
        => RouteAnswers.Compare(Fields, path, request, stock, own, differences);

    private static Task<Dictionary<string, string?>> EncodedAsync(AppProcess app, string path, string? coding)
        => RouteAnswers.EncodedAsync(app, path, coding, Fields);

    private static Task<Dictionary<string, string?>> FieldsAsync(AppProcess app, string path, string? acceptEncoding)
        => RouteAnswers.FieldsAsync(app, path, acceptEncoding, Fields);
}
