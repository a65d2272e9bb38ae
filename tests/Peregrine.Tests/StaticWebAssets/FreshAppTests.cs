using Peregrine.StaticWebAssets;
using Xunit.Abstractions;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The apps of <see cref="FreshApps"/> (the library as a package, in apps made from the .NET
/// 10 templates) against the same apps stock: after publish, every route of the endpoints
/// manifest answers with stock's status, type, encoding, Cache-Control and ETag, with and without
/// <c>Accept-Encoding: br, gzip</c>, in both wirings, and from Peregrine; in Development, every
/// route answers 200 from Peregrine with stock's type and Cache-Control. The publish output holds
/// the library and no AWS assembly.
/// </summary>
[Collection(FreshAppsCollection.Name)]
public sealed class FreshAppTests(FreshApps apps, ITestOutputHelper output)
{
    private static readonly string[] PublishedFields = ["Content-Type", "Content-Encoding", "Cache-Control", "ETag"];
    private static readonly string[] DevelopmentFields = ["Content-Type", "Cache-Control"];

    public static TheoryData<string> Names() => [.. FreshApps.All.Select(a => a.Name)];

    [Theory]
    [MemberData(nameof(Names))]
    public async Task Published_EveryRoute_AnswersAsStockInBothWirings(string app)
    {
        var folder = apps.Published(app);
        output.WriteLine(apps.Timings);
        await CompareAsync(app, Path.Combine(folder, app + ".dll"), folder, folder, "Production", PublishedFields);
    }

    [Theory]
    [MemberData(nameof(Names))]
    public async Task Development_EveryRoute_Answers200WithStocksTypeAndCaching(string app)
    {
        var built = apps.Built(app);
        await CompareAsync(app, Path.Combine(built, app + ".dll"), apps.Project(app), built, "Development", DevelopmentFields);
    }

    [Theory]
    [MemberData(nameof(Names))]
    public void PublishOutput_HoldsTheLibraryPackedAndNoAwsAssembly(string app)
    {
        var project = File.ReadAllText(Path.Combine(apps.Project(app), app + ".csproj"));
        Assert.Contains($"<PackageReference Include=\"Peregrine.AspNetCore\" Version=\"{apps.Version}\" />", project, StringComparison.Ordinal);

        var files = Directory.GetFiles(apps.Published(app)).Select(Path.GetFileName).ToList();
        Assert.Contains("Peregrine.dll", files);
        Assert.DoesNotContain(files, f => f!.StartsWith("AWSSDK", StringComparison.OrdinalIgnoreCase));
    }

    /// <param name="fields">What must equal stock's; the status is 200 for both, and Peregrine's configured header shows it answered.</param>
    private async Task CompareAsync(string app, string dll, string workingDirectory, string manifestFolder, string environment, string[] fields)
    {
        var routes = EndpointsManifest.Load(Path.Combine(manifestFolder, app + ".staticwebassets.endpoints.json")).Routes.Select(r => r.Path).ToList();
        var withMarker = fields.Append(FreshApps.ConfiguredHeader).ToArray();
        using var stock = await AppProcess.StartAsync(dll, workingDirectory, environment, "stock");
        var differences = new List<string>();
        var compared = 0;
        foreach (var wiring in (string[])["keep", "swap"])
        {
            using var own = await AppProcess.StartAsync(dll, workingDirectory, environment, wiring);
            foreach (var path in routes)
            {
                var stockIdentity = await RouteAnswers.FieldsAsync(stock, path, null, fields);
                var ownIdentity = await RouteAnswers.FieldsAsync(own, path, null, withMarker);
                RouteAnswers.Compare(fields, $"{path} ({wiring})", "no Accept-Encoding", stockIdentity, ownIdentity, differences);
                if (ownIdentity[FreshApps.ConfiguredHeader] != "nosniff")
                {
                    differences.Add($"{path} ({wiring}): went past Peregrine");
                }

                if (environment == "Production")
                {
                    var stockEncoded = await RouteAnswers.FieldsAsync(stock, path, "br, gzip", fields);
                    var ownEncoded = await RouteAnswers.EncodedAsync(own, path, stockEncoded["Content-Encoding"], fields);
                    RouteAnswers.Compare(fields, $"{path} ({wiring})", "br, gzip", stockEncoded, ownEncoded, differences);
                }

                compared++;
            }
        }

        output.WriteLine($"{app} ({environment}): {routes.Count} routes, {compared} compared over both wirings, {differences.Count} differences.");
        Assert.True(routes.Count >= 20, $"the manifest lists only {routes.Count} routes");
        Assert.True(differences.Count == 0, string.Join(Environment.NewLine, differences.Take(50)));
    }
}
