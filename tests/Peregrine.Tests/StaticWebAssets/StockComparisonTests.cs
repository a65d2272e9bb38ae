using System.Net;
using Peregrine.StaticWebAssets;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// A published template app, started stock (MapStaticAssets alone) and with Peregrine in its
/// place (swap): every route of its endpoints manifest answers with the same Cache-Control,
/// Content-Type, ETag, Vary and length, with and without <c>Accept-Encoding: br, gzip</c>. The
/// one difference allowed is the documented one: a file whose compressed sidecar saves too little
/// (under 64 bytes or 5%) is sent uncompressed by Peregrine (docs/library.md, "Where it still differs").
/// bench/staticassets/headers.py prints the same comparison as a table, in Development too.
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
        var dll = Path.Combine(folder, app + ".dll");
        var routes = EndpointsManifest.Load(Path.Combine(folder, app + ".staticwebassets.endpoints.json")).Routes
            .Where(route => !route.IsEncodedFile)
            .Select(route => route.Path)
            .ToList();
        using var stock = await AppProcess.StartAsync(dll, folder, "Production", "stock");
        using var swap = await AppProcess.StartAsync(dll, folder, "Production", "swap");

        var compared = 0;
        var differences = new List<string>();
        foreach (var path in routes)
        {
            var stockIdentity = await FieldsAsync(stock, path, null);
            var stockEncoded = await FieldsAsync(stock, path, "br, gzip");
            var ownIdentity = await FieldsAsync(swap, path, null);
            var ownEncoded = await EncodedAsync(swap, path, stockEncoded["Content-Encoding"]);

            Compare(path, "no Accept-Encoding", stockIdentity, ownIdentity, differences);
            var length = long.Parse(stockIdentity["Content-Length"]!);
            var savings = length - long.Parse(stockEncoded["Content-Length"]!);
            if (stockEncoded["Content-Encoding"] is not null
                && (savings < Peregrine.Compression.VariantEncoder.MinimumSavedBytes || savings * 100 < length * Peregrine.Compression.VariantEncoder.MinimumSavedPercent))
            {
                // Sent as identity, under the identity's tag.
                Compare(path, "br, gzip (too small to compress)", stockIdentity, ownEncoded, differences);
            }
            else
            {
                Compare(path, "br, gzip", stockEncoded, ownEncoded, differences);
            }

            compared += 2;
        }

        Assert.True(compared >= 40, $"only {compared} answers compared: the manifest lists {routes.Count} routes");
        Assert.True(differences.Count == 0, string.Join(Environment.NewLine, differences));
    }

    private static void Compare(string path, string request, Dictionary<string, string?> stock, Dictionary<string, string?> own, List<string> differences)
    {
        foreach (var field in Fields)
        {
            if (!string.Equals(stock[field], own[field], StringComparison.Ordinal))
            {
                differences.Add($"{path} ({request}): {field} is '{own[field]}', stock sends '{stock[field]}'");
            }
        }
    }

    /// <summary>
    /// The answer with <c>br, gzip</c> once Peregrine's variant in <paramref name="coding"/> is
    /// ready (it reads publish's sidecars after the index, in the background), within 30 s.
    /// </summary>
    private static async Task<Dictionary<string, string?>> EncodedAsync(AppProcess app, string path, string? coding)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var fields = await FieldsAsync(app, path, "br, gzip");
            if (coding is null || fields["Content-Encoding"] == coding || DateTime.UtcNow > deadline)
            {
                return fields;
            }

            await Task.Delay(50);
        }
    }

    private static async Task<Dictionary<string, string?>> FieldsAsync(AppProcess app, string path, string? acceptEncoding)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (acceptEncoding is not null)
        {
            request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        }

        using var response = await app.Client.SendAsync(request);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{path}: {(int)response.StatusCode}\n{app.Output}");
        await response.Content.LoadIntoBufferAsync();
        return Fields.ToDictionary(
            field => field,
            field => response.Headers.NonValidated.TryGetValues(field, out var values) || response.Content.Headers.NonValidated.TryGetValues(field, out values)
                ? string.Join(", ", values)
                : null);
    }
}
