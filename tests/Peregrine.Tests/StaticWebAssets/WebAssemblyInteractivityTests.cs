using System.Diagnostics;
using Xunit.Abstractions;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The app made by <c>dotnet new blazor --interactivity WebAssembly</c> with the library as a
/// package (<see cref="FreshApps"/>), published, wired both ways, opened in headless Chromium: the
/// Counter page boots the WebAssembly runtime from what Peregrine served (<c>dotnet.js</c>, the
/// runtime's <c>.wasm</c>, the app's assemblies), counts 1 then 2, Blazor shows no error, and
/// every asset the browser fetched answered 200 from Peregrine. The Interactive Server mode is
/// <see cref="BlazorInteractivityTests"/>'.
/// </summary>
[Collection(FreshAppsCollection.Name)]
public sealed class WebAssemblyInteractivityTests(FreshApps apps, ITestOutputHelper output)
{
    [ChromiumTheory]
    [InlineData("keep")]
    [InlineData("swap")]
    public async Task Counter_InHeadlessChromium_RunsOnWebAssemblyFromPeregrine(string wiring)
    {
        using var browser = await HeadlessChromium.StartAsync();
        using var app = await AppProcess.StartAsync(Path.Combine(apps.Published("BlazorWasm"), "BlazorWasm.dll"), apps.Published("BlazorWasm"), "Production", wiring);
        var origin = app.Client.BaseAddress!;
        var started = Stopwatch.GetTimestamp();
        await browser.NavigateAsync(new Uri(origin, "/counter"));

        // :: interactive: the runtime downloads and starts before a click has a handler.
        var count = await BlazorInteractivityTests.UntilInteractive(browser, app, seconds: 60);
        output.WriteLine($"Interactive {Stopwatch.GetElapsedTime(started).TotalSeconds:F1} s after navigating to /counter.");
        await Check(count == "Current count: 1", $"The first click that landed read '{count}', not 'Current count: 1'.");
        count = (await browser.EvaluateAsync(BlazorInteractivityTests.ClickAndRead)).GetString();
        await Check(count == "Current count: 2", $"The second click read '{count}', not 'Current count: 2'.");

        // :: assets: everything but the page came from Peregrine, the runtime's files included.
        // Under keep, the page also imports /_framework/resource-collection.<hash>.js, which no
        // file holds: Blazor's endpoint writes it from MapStaticAssets' routes (the list of
        // resources the WebAssembly boot preloads). It is the app's, as the page is, and under
        // swap the page does not ask for it.
        await BlazorInteractivityTests.UntilAnswered(browser);
        await Check(browser.Unanswered.Count == 0, $"{browser.Unanswered.Count} requests had no answer 10 s after the page became interactive.");
        var fromTheApp = browser.Responses
            .Where(r => Uri.TryCreate(r.Url, UriKind.Absolute, out var url) && url.Authority == origin.Authority && r.Type != "Document")
            .ToList();
        var resourceCollection = fromTheApp.Where(r => new Uri(r.Url).AbsolutePath.StartsWith("/_framework/resource-collection.", StringComparison.Ordinal)).ToList();
        await Check(wiring == "keep" ? resourceCollection.Count == 1 && resourceCollection[0].Status == 200 : resourceCollection.Count == 0,
            $"The page fetched {resourceCollection.Count} resource collections under {wiring}.");
        var assets = fromTheApp.Except(resourceCollection).ToList();
        foreach (var expected in (string[])["/_framework/blazor.web.", "/_framework/dotnet.", "/_framework/BlazorWasm.Client."])
        {
            await Check(assets.Any(r => new Uri(r.Url).AbsolutePath.StartsWith(expected, StringComparison.Ordinal)), $"The browser fetched nothing under {expected}.");
        }

        await Check(assets.Any(r => new Uri(r.Url).AbsolutePath.EndsWith(".wasm", StringComparison.Ordinal)), "The browser fetched no .wasm file.");
        foreach (var asset in assets)
        {
            output.WriteLine($"{asset.Status} {asset.Type} {asset.Url} {asset.Headers.GetValueOrDefault("Content-Encoding", "-")}");
            await Check(asset.Status == 200, $"{asset.Url} ({asset.Type}) answered {asset.Status}.");
            await Check(asset.Headers.GetValueOrDefault(FreshApps.ConfiguredHeader) == "nosniff", $"{asset.Url} ({asset.Type}) went past Peregrine.");
        }

        await Check(!(await browser.EvaluateAsync(BlazorInteractivityTests.ErrorUiShown)).GetBoolean(), "Blazor shows 'An unhandled error has occurred'.");
        await Check(browser.Errors.Count == 0, "The page logged errors.");

        async Task Check(bool holds, string what)
        {
            if (!holds)
            {
                Assert.Fail(await BlazorInteractivityTests.Describe(what, browser, app));
            }
        }
    }
}
