using System.Diagnostics;
using System.Net.WebSockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// One headless Chromium with one page, driven over the Chrome DevTools Protocol
/// (https://chromedevtools.github.io/devtools-protocol/) on a WebSocket: the browser's own
/// endpoint, with the page attached as a flat session. The browser listens on a port it picks
/// (<c>--remote-debugging-port=0</c>) and keeps its profile, and its HOME, in a folder of this
/// instance's own; both the process tree and the folder go on dispose. What the page logged as
/// an error and every response it received are kept, for assertions and their messages.
/// Without Chromium installed the tests that need it are skipped (<see cref="ChromiumTheoryAttribute"/>),
/// except under CI=true, where they fail: CI installs it (.ci/run).
/// </summary>
public sealed partial class HeadlessChromium : IDisposable
{
    /// <summary>A bound on each protocol command, in the test run's own time (<see cref="HangGuard"/>).</summary>
    private static readonly TimeSpan CommandBound = TimeSpan.FromSeconds(30);

    private readonly Process _process;
    private readonly string _folder;
    private readonly StringBuilder _stderr = new();
    private readonly ClientWebSocket _socket = new();
    private readonly CancellationTokenSource _closing = new();
    private readonly Dictionary<int, TaskCompletionSource<JsonElement>> _pending = [];
    private readonly List<string> _errors = [];
    private readonly List<Response> _responses = [];
    private readonly Dictionary<string, string> _unanswered = [];
    private readonly SemaphoreSlim _sending = new(1, 1);
    private TaskCompletionSource _loaded = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private string? _session;
    private int _nextId;

    private HeadlessChromium(Process process, string folder)
    {
        _process = process;
        _folder = folder;
    }

    /// <summary>The browser's executable on PATH, or null.</summary>
    public static string? Executable { get; } = new[] { "chromium", "chromium-browser", "google-chrome" }
        .SelectMany(name => (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':').Where(folder => folder.Length > 0).Select(folder => Path.Combine(folder, name)))
        .FirstOrDefault(File.Exists);

    /// <summary>Under CI the browser tests must run: a missing Chromium is a failure there, not a skip.</summary>
    public static bool Required => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    /// <summary>A response the page received: its URL, status, resource type (Document, Script, Stylesheet...) and fields.</summary>
    public sealed record Response(string Url, int Status, string Type, IReadOnlyDictionary<string, string> Headers);

    /// <summary>Console errors, uncaught exceptions and the browser's own error log entries, in order.</summary>
    public IReadOnlyList<string> Errors => Copy(_errors, _errors);

    public IReadOnlyList<Response> Responses => Copy(_responses, _responses);

    /// <summary>Requests the page sent that have had neither a response nor a failure yet: "type url".</summary>
    public IReadOnlyList<string> Unanswered => Copy(_unanswered.Values, _responses);

    /// <summary>What the browser wrote to stderr, for a failing assertion's message.</summary>
    public string Output
    {
        get
        {
            lock (_stderr)
            {
                return _stderr.ToString();
            }
        }
    }

    public static async Task<HeadlessChromium> StartAsync()
    {
        if (Executable is null)
        {
            throw new InvalidOperationException("Chromium is required for the browser tests and is not installed (apt-get install --no-install-recommends chromium; .ci/run installs it under CI=true).");
        }

        var folder = Path.Combine(Path.GetTempPath(), "peregrine-tests", "chromium-" + Environment.ProcessId + "-" + Guid.NewGuid().ToString("N")[..8]);
        Directory.CreateDirectory(folder);
        var start = new ProcessStartInfo(Executable) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        foreach (var argument in (string[])[
            "--headless=new", "--no-sandbox", "--remote-debugging-port=0", "--user-data-dir=" + Path.Combine(folder, "profile"),
            "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-dev-shm-usage", "about:blank"])
        {
            start.ArgumentList.Add(argument);
        }

        // Chromium keeps its NSS database and caches under HOME and the XDG folders, not the profile.
        start.Environment["HOME"] = folder;
        start.Environment["XDG_CONFIG_HOME"] = Path.Combine(folder, "config");
        start.Environment["XDG_CACHE_HOME"] = Path.Combine(folder, "cache");

        Process process;
        try
        {
            process = Process.Start(start)!;
        }
        catch
        {
            Directory.Delete(folder, recursive: true);
            throw;
        }

        var browser = new HeadlessChromium(process, folder);
        var listening = new TaskCompletionSource<Uri>(TaskCreationOptions.RunContinuationsAsynchronously);
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                return;
            }

            lock (browser._stderr)
            {
                // Bounded: a browser that logs without end does not fill the test host's memory.
                if (browser._stderr.Length < 64 * 1024)
                {
                    browser._stderr.AppendLine(e.Data);
                }
            }

            if (DevToolsListening().Match(e.Data) is { Success: true } match)
            {
                listening.TrySetResult(new Uri(match.Groups[1].Value));
            }
        };
        process.BeginErrorReadLine();
        process.BeginOutputReadLine();
        try
        {
            var exited = process.WaitForExitAsync();
            await HangGuard.WithinAsync(Task.WhenAny(listening.Task, exited), TimeSpan.FromSeconds(30));
            if (!listening.Task.IsCompleted)
            {
                throw new InvalidOperationException($"Chromium exited ({process.ExitCode}) before it listened:\n{browser.Output}");
            }

            await HangGuard.WithinAsync(browser._socket.ConnectAsync(await listening.Task, CancellationToken.None), CommandBound);
            _ = browser.ReceiveAsync();
            var target = await browser.SendAsync("Target.createTarget", new JsonObject { ["url"] = "about:blank" }, session: false);
            var attached = await browser.SendAsync("Target.attachToTarget", new JsonObject { ["targetId"] = target.GetProperty("targetId").GetString(), ["flatten"] = true }, session: false);
            browser._session = attached.GetProperty("sessionId").GetString();
            foreach (var domain in (string[])["Page", "Runtime", "Network", "Log"])
            {
                await browser.SendAsync(domain + ".enable");
            }

            return browser;
        }
        catch (Exception e) when (e is not InvalidOperationException)
        {
            var output = browser.Output;
            browser.Dispose();
            throw new InvalidOperationException($"Chromium did not start: {e.Message}\n{output}", e);
        }
        catch
        {
            browser.Dispose();
            throw;
        }
    }

    /// <summary>Opens <paramref name="url"/> in the page and waits for its load event.</summary>
    public async Task NavigateAsync(Uri url)
    {
        _loaded = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        var navigated = await SendAsync("Page.navigate", new JsonObject { ["url"] = url.ToString() });
        if (navigated.TryGetProperty("errorText", out var error))
        {
            throw new InvalidOperationException($"Navigation to {url} failed: {error.GetString()}");
        }

        await HangGuard.WithinAsync(_loaded.Task, CommandBound);
    }

    /// <summary>The value of a JavaScript expression in the page (a promise is awaited); throws with the page's exception.</summary>
    public async Task<JsonElement> EvaluateAsync(string expression)
    {
        var result = await SendAsync("Runtime.evaluate", new JsonObject { ["expression"] = expression, ["awaitPromise"] = true, ["returnByValue"] = true });
        if (result.TryGetProperty("exceptionDetails", out var exception))
        {
            throw new InvalidOperationException($"The page threw: {exception}");
        }

        return result.GetProperty("result").TryGetProperty("value", out var value) ? value : default;
    }

    /// <summary>Sends one command, to the page's session unless <paramref name="session"/> is false, and returns its result.</summary>
    private async Task<JsonElement> SendAsync(string method, JsonObject? parameters = null, bool session = true)
    {
        var id = Interlocked.Increment(ref _nextId);
        var message = new JsonObject { ["id"] = id, ["method"] = method, ["params"] = parameters ?? [] };
        if (session)
        {
            message["sessionId"] = _session;
        }

        var answer = new TaskCompletionSource<JsonElement>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_pending)
        {
            _pending[id] = answer;
        }

        await _sending.WaitAsync();
        try
        {
            await _socket.SendAsync(Encoding.UTF8.GetBytes(message.ToJsonString()), WebSocketMessageType.Text, endOfMessage: true, CancellationToken.None);
        }
        finally
        {
            _sending.Release();
        }

        return await HangGuard.WithinAsync(answer.Task, CommandBound);
    }

    /// <summary>Reads the socket until it closes: answers complete their command, events are recorded.</summary>
    private async Task ReceiveAsync()
    {
        var buffer = new byte[64 * 1024];
        using var message = new MemoryStream();
        try
        {
            while (_socket.State == WebSocketState.Open)
            {
                var received = await _socket.ReceiveAsync(buffer, _closing.Token);
                if (received.MessageType == WebSocketMessageType.Close)
                {
                    break;
                }

                message.Write(buffer, 0, received.Count);
                if (received.EndOfMessage)
                {
                    Dispatch(JsonDocument.Parse(message.ToArray()).RootElement.Clone());
                    message.SetLength(0);
                }
            }
        }
        catch (Exception e) when (e is WebSocketException or OperationCanceledException)
        {
            // The browser went away or this instance is being disposed; waiting commands fail below.
        }

        lock (_pending)
        {
            foreach (var pending in _pending.Values)
            {
                pending.TrySetException(new InvalidOperationException("The browser closed the DevTools connection:\n" + Output));
            }

            _pending.Clear();
        }
    }

    private void Dispatch(JsonElement message)
    {
        if (message.TryGetProperty("id", out var id))
        {
            TaskCompletionSource<JsonElement>? answer;
            lock (_pending)
            {
                _pending.Remove(id.GetInt32(), out answer);
            }

            if (message.TryGetProperty("error", out var error))
            {
                answer?.TrySetException(new InvalidOperationException("DevTools answered an error: " + error));
            }
            else
            {
                answer?.TrySetResult(message.GetProperty("result"));
            }

            return;
        }

        var parameters = message.TryGetProperty("params", out var p) ? p : default;
        switch (message.GetProperty("method").GetString())
        {
            case "Page.loadEventFired":
                _loaded.TrySetResult();
                break;
            case "Network.requestWillBeSent":
                lock (_responses)
                {
                    _unanswered[parameters.GetProperty("requestId").GetString()!] = $"{(parameters.TryGetProperty("type", out var type) ? type.GetString() : "?")} {parameters.GetProperty("request").GetProperty("url").GetString()}";
                }

                break;
            case "Network.responseReceived":
                var response = parameters.GetProperty("response");
                var headers = response.GetProperty("headers").EnumerateObject().ToDictionary(h => h.Name, h => h.Value.GetString() ?? "", StringComparer.OrdinalIgnoreCase);
                lock (_responses)
                {
                    _unanswered.Remove(parameters.GetProperty("requestId").GetString()!);
                    _responses.Add(new Response(response.GetProperty("url").GetString()!, response.GetProperty("status").GetInt32(), parameters.GetProperty("type").GetString()!, headers));
                }

                break;
            case "Network.loadingFailed":
                string? failed;
                lock (_responses)
                {
                    _unanswered.Remove(parameters.GetProperty("requestId").GetString()!, out failed);
                }

                Error($"loading failed: {failed ?? parameters.GetProperty("type").GetString()}: {parameters.GetProperty("errorText").GetString()}");
                break;
            case "Runtime.consoleAPICalled" when parameters.GetProperty("type").GetString() is "error" or "assert":
                Error("console: " + string.Join(' ', parameters.GetProperty("args").EnumerateArray().Select(a => a.TryGetProperty("value", out var v) ? v.ToString() : a.TryGetProperty("description", out var d) ? d.GetString() : "?")));
                break;
            case "Runtime.exceptionThrown":
                var details = parameters.GetProperty("exceptionDetails");
                Error("uncaught: " + (details.TryGetProperty("exception", out var thrown) && thrown.TryGetProperty("description", out var description) ? description.GetString() : details.GetProperty("text").GetString()));
                break;
            case "Log.entryAdded" when parameters.GetProperty("entry").GetProperty("level").GetString() == "error":
                var entry = parameters.GetProperty("entry");
                Error($"log: {entry.GetProperty("text").GetString()} {(entry.TryGetProperty("url", out var url) ? url.GetString() : "")}");
                break;
        }
    }

    private static List<T> Copy<T>(IEnumerable<T> items, object gate)
    {
        lock (gate)
        {
            return [.. items];
        }
    }

    private void Error(string text)
    {
        lock (_errors)
        {
            _errors.Add(text);
        }
    }

    [GeneratedRegex(@"DevTools listening on (ws://\S+)")]
    private static partial Regex DevToolsListening();

    public void Dispose()
    {
        _closing.Cancel();
        _socket.Dispose();
        try
        {
            if (!_process.HasExited)
            {
                _process.Kill(entireProcessTree: true);
                _process.WaitForExit(10_000);
            }
        }
        catch (InvalidOperationException)
        {
            // Already gone.
        }

        _process.Dispose();

        // Chromium's helpers can still be closing files in the profile just after the kill.
        for (var attempt = 0; attempt < 20 && Directory.Exists(_folder); attempt++)
        {
            try
            {
                Directory.Delete(_folder, recursive: true);
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                Thread.Sleep(100);
            }
        }
    }
}
