using System.Diagnostics;
using System.Net;
using System.Text;
using System.Text.RegularExpressions;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// One of <see cref="TemplateApps"/>' apps running in a process of its own, on a free loopback
/// port, as <c>dotnet run</c> (Development, from the project folder) or a published app
/// (Production, from the publish folder) runs it. Killed, with its tree, on dispose.
/// </summary>
public sealed partial class AppProcess : IDisposable
{
    private readonly Process _process;
    private readonly StringBuilder _output = new();

    private AppProcess(Process process)
    {
        _process = process;
    }

    public HttpClient Client { get; private set; } = null!;

    /// <summary>What the app wrote so far, for a failing assertion's message.</summary>
    public string Output
    {
        get
        {
            lock (_output)
            {
                return _output.ToString();
            }
        }
    }

    /// <param name="dll">The app's assembly.</param>
    /// <param name="workingDirectory">Its content root: the project folder, or the publish folder.</param>
    /// <param name="environment">Development or Production.</param>
    /// <param name="wiring"><c>keep</c> (MapStaticAssets stays after UsePeregrine), <c>swap</c> (UsePeregrine alone) or <c>stock</c> (MapStaticAssets alone, no Peregrine).</param>
    /// <param name="settings">More environment variables (configuration keys with <c>__</c> for <c>:</c>).</param>
    public static async Task<AppProcess> StartAsync(string dll, string workingDirectory, string environment, string wiring, IReadOnlyDictionary<string, string>? settings = null)
    {
        var start = new ProcessStartInfo("dotnet") { WorkingDirectory = workingDirectory, RedirectStandardOutput = true, RedirectStandardError = true };
        start.ArgumentList.Add(dll);
        TemplateApps.Clean(start);
        start.Environment["ASPNETCORE_ENVIRONMENT"] = environment;
        start.Environment["ASPNETCORE_URLS"] = "http://127.0.0.1:0";
        start.Environment["PEREGRINE_WIRING"] = wiring;
        start.Environment["Logging__LogLevel__Default"] = "Information";
        foreach (var (key, value) in settings ?? new Dictionary<string, string>())
        {
            start.Environment[key] = value;
        }

        var app = new AppProcess(Process.Start(start)!);
        var listening = new TaskCompletionSource<Uri>(TaskCreationOptions.RunContinuationsAsynchronously);
        void Read(object sender, DataReceivedEventArgs e)
        {
            if (e.Data is null)
            {
                return;
            }

            lock (app._output)
            {
                app._output.AppendLine(e.Data);
            }

            if (Listening().Match(e.Data) is { Success: true } match)
            {
                listening.TrySetResult(new Uri(match.Groups[1].Value));
            }
        }

        app._process.OutputDataReceived += Read;
        app._process.ErrorDataReceived += Read;
        app._process.BeginOutputReadLine();
        app._process.BeginErrorReadLine();
        try
        {
            var exited = app._process.WaitForExitAsync();
            var first = await Task.WhenAny(listening.Task, exited, Task.Delay(TimeSpan.FromSeconds(60)));
            if (first != listening.Task)
            {
                throw new InvalidOperationException($"{Path.GetFileName(dll)} did not start listening ({(first == exited ? "it exited" : "60 s")}):\n{app.Output}");
            }

            app.Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, AutomaticDecompression = DecompressionMethods.None })
            {
                BaseAddress = await listening.Task,
                Timeout = TimeSpan.FromSeconds(30),
            };
            return app;
        }
        catch
        {
            app.Dispose();
            throw;
        }
    }

    [GeneratedRegex(@"Now listening on: (http://127\.0\.0\.1:\d+)")]
    private static partial Regex Listening();

    public void Dispose()
    {
        Client?.Dispose();
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
    }
}
