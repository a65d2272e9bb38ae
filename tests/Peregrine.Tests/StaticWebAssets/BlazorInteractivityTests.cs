using System.Diagnostics;
using Peregrine.Tests.Infrastructure;
using Xunit.Abstractions;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The app made from the .NET <c>blazor</c> template (<see cref="TemplateApps"/>), wired both ways,
/// in Development and after <c>dotnet publish</c>, opened in headless Chromium: the Counter page
/// becomes interactive (its circuit starts from the <c>blazor.web.js</c> Peregrine served), the
/// button counts 1 then 2, Blazor shows no error, and every local asset the browser fetched for
/// the page answered 200 from Peregrine.
/// </summary>
[Collection(TemplateAppsCollection.Name)]
public sealed class BlazorInteractivityTests(TemplateApps apps, ITestOutputHelper output)
{
    /// <summary>
    /// Clicks 'Click me' and waits, in the page, up to 2 s for the count to change; returns what
    /// the status reads then. A click before the circuit is up has no handler and changes nothing;
    /// one that lands is rendered back within the wait, so the next probe reads the new count and
    /// does not click on top of it.
    /// </summary>
    internal const string ClickAndRead = """
        (async () => {
          const status = () => document.querySelector('[role=status]')?.textContent ?? '';
          const before = status();
          const button = [...document.querySelectorAll('button')].find(b => b.textContent.trim() === 'Click me');
          if (!button) return before;
          button.click();
          for (let i = 0; i < 40 && status() === before; i++) await new Promise(r => setTimeout(r, 50));
          return status();
        })()
        """;

    /// <summary>True when Blazor's "An unhandled error has occurred" bar is shown (the scoped CSS bundle hides it).</summary>
    internal const string ErrorUiShown = """
        (() => {
          const bar = document.getElementById('blazor-error-ui');
          return !!bar && getComputedStyle(bar).display !== 'none';
        })()
        """;

    public static TheoryData<bool, string> Matrix() => new()
    {
        { false, "keep" },
        { false, "swap" },
        { true, "keep" },
        { true, "swap" },
    };

    [ChromiumTheory]
    [MemberData(nameof(Matrix))]
    public async Task Counter_InHeadlessChromium_IsInteractiveWithAssetsFromPeregrine(bool published, string wiring)
    {
        using var browser = await HeadlessChromium.StartAsync();

        // TemplateAppTests' Development edit test rewrites the scoped CSS bundle (which hides
        // Blazor's error bar and imports the library's bundle) and leaves it so.
        apps.UndoEdits();
        using var app = published
            ? await AppProcess.StartAsync(Path.Combine(apps.Published("BlazorApp"), "BlazorApp.dll"), apps.Published("BlazorApp"), "Production", wiring)
            : await AppProcess.StartAsync(Path.Combine(apps.Built("BlazorApp"), "BlazorApp.dll"), apps.Project("BlazorApp"), "Development", wiring);
        var origin = app.Client.BaseAddress!;
        var started = Stopwatch.GetTimestamp();
        await browser.NavigateAsync(new Uri(origin, "/counter"));

        // :: interactive: the circuit starts a little after the load event.
        var count = await UntilInteractive(browser, app);
        output.WriteLine($"Interactive {Stopwatch.GetElapsedTime(started).TotalSeconds:F1} s after navigating to /counter.");
        await Check(count == "Current count: 1", $"The first click that landed read '{count}', not 'Current count: 1'.");
        count = (await browser.EvaluateAsync(ClickAndRead)).GetString();
        await Check(count == "Current count: 2", $"The second click read '{count}', not 'Current count: 2'.");

        // :: assets: what the browser fetched from the app, other than the page and the circuit's
        // own endpoints (those are the app's, past Peregrine by design), came from Peregrine.
        await UntilAnswered(browser);
        var unanswered = browser.Unanswered.Where(r => !r.Contains("/_blazor", StringComparison.Ordinal)).ToList();
        await Check(unanswered.Count == 0, $"{unanswered.Count} requests had no answer 10 s after the page became interactive.");
        var assets = browser.Responses
            .Where(r => Uri.TryCreate(r.Url, UriKind.Absolute, out var url) && url.Authority == origin.Authority)
            .Where(r => r.Type != "Document" && !new Uri(r.Url).AbsolutePath.StartsWith("/_blazor", StringComparison.Ordinal))
            .ToList();
        foreach (var expected in (string[])["/_framework/blazor.web.", "/_content/Lib/lib.", "/BlazorApp.", "/_content/Lib/Lib.", "/Components/Layout/ReconnectModal."])
        {
            await Check(assets.Any(r => new Uri(r.Url).AbsolutePath.StartsWith(expected, StringComparison.Ordinal)), $"The browser fetched nothing under {expected}.");
        }

        foreach (var asset in assets)
        {
            output.WriteLine($"{asset.Status} {asset.Type} {asset.Url} ETag {asset.Headers.GetValueOrDefault("ETag", "-")}");
            await Check(asset.Status == 200, $"{asset.Url} ({asset.Type}) answered {asset.Status}.");
            await Check(!asset.Headers.ContainsKey(TemplateApps.PastPeregrine), $"{asset.Url} ({asset.Type}) went past Peregrine.");
        }

        // :: no error: Blazor's error bar is hidden (by the scoped CSS bundle, which a stylesheet
        // that never came would hold back too), and nothing went to the console as an error.
        await Check(!(await browser.EvaluateAsync(ErrorUiShown)).GetBoolean(), "Blazor shows 'An unhandled error has occurred'.");
        await Check(browser.Errors.Count == 0, "The page logged errors.");

        async Task Check(bool holds, string what)
        {
            if (!holds)
            {
                Assert.Fail(await Describe(what, browser, app));
            }
        }
    }

    /// <summary>Clicks until a click changes the count, for up to <paramref name="seconds"/> of the test run's own time; returns the count it changed to.</summary>
    internal static async Task<string> UntilInteractive(HeadlessChromium browser, AppProcess app, int seconds = 30)
    {
        using var guard = new HangGuard(TimeSpan.FromSeconds(seconds));
        var count = "";
        while (!guard.Token.IsCancellationRequested)
        {
            count = (await browser.EvaluateAsync(ClickAndRead)).GetString() ?? "";
            if (count.StartsWith("Current count: ", StringComparison.Ordinal) && count != "Current count: 0")
            {
                return count;
            }
        }

        Assert.Fail(await Describe($"Counter did not become interactive in {guard.Bound.TotalSeconds} s (status: '{count}').", browser, app));
        return count;
    }

    /// <summary>Waits up to 10 s for every request the page sent to the app to be answered or to fail, other than the circuit's.</summary>
    internal static async Task UntilAnswered(HeadlessChromium browser)
    {
        using var guard = new HangGuard(TimeSpan.FromSeconds(10));
        while (!guard.Token.IsCancellationRequested && browser.Unanswered.Any(r => !r.Contains("/_blazor", StringComparison.Ordinal)))
        {
            await Task.Delay(50);
        }
    }

    /// <summary>A failure message with what the page shows, what the browser logged, and what it fetched.</summary>
    internal static async Task<string> Describe(string what, HeadlessChromium browser, AppProcess app)
    {
        string text;
        try
        {
            text = (await browser.EvaluateAsync("document.body ? document.body.innerText : document.documentElement.outerHTML")).GetString() ?? "";
        }
        catch (Exception e) when (e is InvalidOperationException or TimeoutException)
        {
            text = "(could not read the page: " + e.Message + ")";
        }

        var responses = string.Join('\n', browser.Responses.Select(r => $"  {r.Status} {r.Type} {r.Url}{(r.Headers.ContainsKey(TemplateApps.PastPeregrine) ? " (past Peregrine)" : "")}"));
        return $"""
            {what}
            Page text:
            {text}
            Browser errors:
            {string.Join('\n', browser.Errors)}
            Responses:
            {responses}
            Requests with no answer:
            {string.Join('\n', browser.Unanswered)}
            App output:
            {app.Output}
            """;
    }
}

/// <summary>A test that needs <see cref="HeadlessChromium"/>: skipped, saying why, where Chromium is not installed, unless CI=true.</summary>
public sealed class ChromiumTheoryAttribute : TheoryAttribute
{
    public ChromiumTheoryAttribute()
    {
        if (HeadlessChromium.Executable is null && !HeadlessChromium.Required)
        {
            Skip = "Chromium is not installed here (apt-get install --no-install-recommends chromium; .ci/run installs it).";
        }
    }
}
