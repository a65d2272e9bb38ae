using System.Security.Cryptography;
using System.Text.Json;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;
using Peregrine.Tests.StaticWebAssets;
using static Peregrine.Tests.Compression.DictionaryDeltaTests;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Compression dictionaries in a real browser: headless Chromium with a persistent profile
/// visits a site, the site is redeployed with a new fingerprinted bundle, and on the second
/// visit the browser receives the bundle as dcz and decodes it to the new bytes (Resource
/// Timing's sizes, and the SHA-256 of what the page reads). Chromium keeps dictionaries only
/// for a secure context, which http://127.0.0.1 is.
/// </summary>
public sealed class DictionaryBrowserTests
{
    [ChromiumFact(AndZstd = true)]
    public async Task StandaloneServer_Redeploy_SecondVisitGetsTheNewBundleAsDcz()
    {
        var old = Script(1);
        var @new = Script(2);
        using var tree = new TempTree();
        tree.Write("index.html", Page(OldPath));
        tree.Write(OldPath[1..], old);
        using var server = ServerProcess.Start(new Dictionary<string, string>(), tree.Root, "--port", "0");
        var origin = new Uri($"http://127.0.0.1:{(await server.AddressAsync()).Port}/");
        using var browser = await HeadlessChromium.StartAsync();

        await FirstVisitAsync(browser, origin);

        // The deploy: a new bundle under a new name, the page pointing at it, the old one gone.
        tree.Write(NewPath[1..], @new);
        tree.Write("index.html", Page(NewPath));
        File.Delete(Path.Combine(tree.Root, OldPath[1..]));
        await DeltaReadyAsync(origin, old);

        var seen = await SecondVisitAsync(browser, origin);

        AssertDecoded(seen, @new, browser);
    }

    /// <summary>A page that loads <paramref name="bundle"/> as a module script.</summary>
    internal static string Page(string bundle) => $"<!doctype html><html><body><script type=\"module\" src=\"{bundle}\"></script></body></html>";

    /// <summary>Loads the page, then gives Chromium time to store the bundle as a dictionary (it does so after the body is read).</summary>
    internal static async Task FirstVisitAsync(HeadlessChromium browser, Uri origin)
    {
        await browser.NavigateAsync(new Uri(origin, "/index.html"));
        var marked = browser.Responses.SingleOrDefault(r => r.Url.EndsWith(OldPath, StringComparison.Ordinal));
        Assert.True(marked is not null && Field(marked, "use-as-dictionary") == "match=\"/assets/app-*.js\"", "the first visit did not load the bundle marked as a dictionary");
        await Task.Delay(1000);
    }

    /// <summary>Waits until <paramref name="origin"/> answers the new bundle as a delta against <paramref name="old"/>.</summary>
    internal static async Task DeltaReadyAsync(Uri origin, byte[] old)
    {
        using var client = new HttpClient { BaseAddress = origin };
        using var guard = new HangGuard(TimeSpan.FromSeconds(60));
        while (true)
        {
            using var response = await client.SendAsync(Request(HttpMethod.Get, NewPath, Hash(old), "gzip, br, zstd, dcz"), guard.Token);
            if (response.Content.Headers.ContentEncoding.Contains("dcz"))
            {
                return;
            }

            await Task.Delay(100, guard.Token);
        }
    }

    /// <summary>Visits again and reads what the browser made of the new bundle.</summary>
    internal static async Task<Seen> SecondVisitAsync(HeadlessChromium browser, Uri origin)
    {
        await browser.NavigateAsync(new Uri(origin, "/index.html"));
        return await ReadAsync(browser, NewPath);
    }

    /// <summary>What the page loaded from <paramref name="path"/> (same origin): its Resource Timing sizes, the SHA-256 of the bytes a fetch of it reads, and the Content-Encoding it arrived with.</summary>
    internal static async Task<Seen> ReadAsync(HeadlessChromium browser, string path)
    {
        var value = await browser.EvaluateAsync($$"""
            (async () => {
              const url = location.origin + '{{path}}';
              const entry = performance.getEntriesByName(url)[0];
              const bytes = await (await fetch(url)).arrayBuffer();
              const sha = Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes))).map(b => b.toString(16).padStart(2, '0')).join('');
              return JSON.stringify({ encoded: entry ? entry.encodedBodySize : -1, decoded: entry ? entry.decodedBodySize : -1, sha });
            })()
            """);
        using var json = JsonDocument.Parse(value.GetString()!);
        var response = browser.Responses.LastOrDefault(r => r.Url.EndsWith(path, StringComparison.Ordinal));
        return new Seen(json.RootElement.GetProperty("encoded").GetInt64(), json.RootElement.GetProperty("decoded").GetInt64(), json.RootElement.GetProperty("sha").GetString()!, response is null ? null : Field(response, "content-encoding"));
    }

    internal static void AssertDecoded(Seen seen, byte[] @new, HeadlessChromium browser)
    {
        var context = $"browser saw {seen}; responses: {string.Join(", ", browser.Responses.Select(r => r.Url + " " + r.Status))}; errors: {string.Join(" | ", browser.Errors)}";
        Assert.True(seen.Encoding == "dcz", context);
        Assert.True(seen.Decoded == @new.Length, context);
        Assert.True(seen.Encoded > 0 && seen.Encoded * 5 < @new.Length, context);
        Assert.True(Convert.ToHexStringLower(SHA256.HashData(@new)) == seen.Sha256, context);
    }

    internal static string? Field(HeadlessChromium.Response response, string name)
        => response.Headers.FirstOrDefault(h => h.Key.Equals(name, StringComparison.OrdinalIgnoreCase)).Value;

    /// <summary>What the browser made of the new bundle: Resource Timing's sizes, the SHA-256 of the bytes it read, and the Content-Encoding it received.</summary>
    internal sealed record Seen(long Encoded, long Decoded, string Sha256, string? Encoding);
}
