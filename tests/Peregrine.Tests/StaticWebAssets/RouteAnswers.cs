using System.Net;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// What an app answers for a route, as header fields by name, and how two apps' answers are
/// compared: the requests <see cref="StockComparisonTests"/> and <see cref="FreshAppTests"/>
/// send to a stock app and to the same app with Peregrine.
/// </summary>
internal static class RouteAnswers
{
    /// <summary>The field a fingerprinted route announces a compression dictionary with (RFC 9842 §2.1), which stock never sends.</summary>
    public const string UseAsDictionary = "Use-As-Dictionary";

    /// <summary>
    /// Adds a line to <paramref name="differences"/> for each of <paramref name="fields"/> whose
    /// value differs. The one difference expected: where Peregrine announces a dictionary
    /// (<see cref="UseAsDictionary"/>), its Vary adds Available-Dictionary to stock's, since the
    /// same URL may then be answered with a delta (RFC 9842 §6.2).
    /// </summary>
    public static void Compare(IReadOnlyList<string> fields, string path, string request, Dictionary<string, string?> stock, Dictionary<string, string?> own, List<string> differences)
    {
        foreach (var field in fields)
        {
            var expected = field == "Vary" && own.GetValueOrDefault(UseAsDictionary) is not null && stock[field] is { } vary
                ? vary + ", Available-Dictionary"
                : stock[field];
            if (!string.Equals(expected, own[field], StringComparison.Ordinal))
            {
                differences.Add($"{path} ({request}): {field} is '{own[field]}', stock sends '{stock[field]}'");
            }
        }
    }

    /// <summary>
    /// The answer with <c>br, gzip</c> once Peregrine's variant in <paramref name="coding"/> is
    /// ready (it reads publish's sidecars after the index, in the background), within 30 s.
    /// </summary>
    public static async Task<Dictionary<string, string?>> EncodedAsync(AppProcess app, string path, string? coding, IReadOnlyList<string> fields)
    {
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (true)
        {
            var answer = await FieldsAsync(app, path, "br, gzip", fields);
            if (coding is null || answer["Content-Encoding"] == coding || DateTime.UtcNow > deadline)
            {
                return answer;
            }

            await Task.Delay(50);
        }
    }

    /// <summary>GET <paramref name="path"/>; fails unless it answers 200; the values of <paramref name="fields"/> (null where absent).</summary>
    public static async Task<Dictionary<string, string?>> FieldsAsync(AppProcess app, string path, string? acceptEncoding, IReadOnlyList<string> fields)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (acceptEncoding is not null)
        {
            request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        }

        using var response = await app.Client.SendAsync(request);
        Assert.True(response.StatusCode == HttpStatusCode.OK, $"{path}: {(int)response.StatusCode}\n{app.Output}");
        await response.Content.LoadIntoBufferAsync();
        return fields.Append(UseAsDictionary).Distinct().ToDictionary(
            field => field,
            field => response.Headers.NonValidated.TryGetValues(field, out var values) || response.Content.Headers.NonValidated.TryGetValues(field, out values)
                ? string.Join(", ", values)
                : null);
    }
}
