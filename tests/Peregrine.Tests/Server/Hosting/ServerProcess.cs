using System.Collections.Concurrent;
using System.Diagnostics;
using System.Runtime.InteropServices;
using System.Text.RegularExpressions;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// The built server run as its own process (<c>dotnet Peregrine.Server.dll</c>, the copy beside
/// the tests), for what only a process shows: signals and exit codes.
/// </summary>
internal sealed partial class ServerProcess : IDisposable
{
    private readonly Process _process;
    private readonly ConcurrentQueue<string> _output = new();
    private readonly ConcurrentQueue<string> _errors = new();
    private readonly List<(string Text, TaskCompletionSource<string> Found)> _waiters = [];
    private readonly TaskCompletionSource<Uri> _address = new(TaskCreationOptions.RunContinuationsAsynchronously);

    private ServerProcess(Process process)
    {
        _process = process;
        process.OutputDataReceived += (_, e) =>
        {
            if (e.Data is null)
            {
                _address.TrySetException(new InvalidOperationException("The server closed its output without printing a URL: " + Errors));
                return;
            }

            _output.Enqueue(e.Data);
            Seen(e.Data);
            if (ServingLine().Match(e.Data) is { Success: true } match)
            {
                _address.TrySetResult(new Uri(match.Groups[1].Value));
            }
        };
        process.ErrorDataReceived += (_, e) =>
        {
            if (e.Data is not null)
            {
                _errors.Enqueue(e.Data);
                Seen(e.Data);
            }
        };
        process.BeginOutputReadLine();
        process.BeginErrorReadLine();
    }

    public int Id => _process.Id;

    public bool HasExited => _process.HasExited;

    public int ExitCode => _process.ExitCode;

    public string Output => string.Join("\n", _output);

    public string Errors => string.Join("\n", _errors);

    public static ServerProcess Start(params string[] args) => Start(new Dictionary<string, string>(), args);

    /// <summary>Starts the server with these environment variables added to the test run's.</summary>
    public static ServerProcess Start(IReadOnlyDictionary<string, string> environment, params string[] args)
    {
        var start = new ProcessStartInfo("dotnet")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        start.ArgumentList.Add(Path.Combine(AppContext.BaseDirectory, "Peregrine.Server.dll"));
        foreach (var arg in args)
        {
            start.ArgumentList.Add(arg);
        }

        // The test run's own environment must not configure the server; the switch to the
        // portable parts is not configuration, and a run under it is to run its servers so too.
        foreach (var name in start.Environment.Keys.Where(k => k.StartsWith("PEREGRINE_", StringComparison.Ordinal) && k != Peregrine.Interop.PlatformParts.PortableVariable).ToList())
        {
            start.Environment.Remove(name);
        }

        foreach (var (name, value) in environment)
        {
            start.Environment[name] = value;
        }

        return new ServerProcess(Process.Start(start)!);
    }

    /// <summary>The first line on either stream that contains <paramref name="text"/>, already printed or still to come.</summary>
    public Task<string> LineAsync(string text, TimeSpan timeout)
    {
        var found = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        lock (_waiters)
        {
            if (_output.Concat(_errors).FirstOrDefault(line => line.Contains(text, StringComparison.Ordinal)) is { } line)
            {
                return Task.FromResult(line);
            }

            _waiters.Add((text, found));
        }

        return HangGuard.WithinAsync(found.Task, timeout);
    }

    private void Seen(string line)
    {
        lock (_waiters)
        {
            _waiters.RemoveAll(waiter =>
            {
                if (!line.Contains(waiter.Text, StringComparison.Ordinal))
                {
                    return false;
                }

                waiter.Found.TrySetResult(line);
                return true;
            });
        }
    }

    /// <summary>The URL from the "Peregrine serving ... at URL" line (bounded in the run's own time, <see cref="HangGuard"/>).</summary>
    public Task<Uri> AddressAsync() => HangGuard.WithinAsync(_address.Task, TimeSpan.FromSeconds(15));

    public void Signal(int signal)
    {
        if (kill(_process.Id, signal) != 0)
        {
            throw new InvalidOperationException($"kill({_process.Id}, {signal}) failed: errno {Marshal.GetLastPInvokeError()}");
        }
    }

    public async Task<int> WaitForExitAsync(TimeSpan timeout)
    {
        using var guard = new HangGuard(timeout);
        await _process.WaitForExitAsync(guard.Token);
        return _process.ExitCode;
    }

    public void Dispose()
    {
        if (!_process.HasExited)
        {
            _process.Kill();
            _process.WaitForExit(5000);
        }

        _process.Dispose();
    }

    public const int SIGTERM = 15;

    [DllImport("libc", SetLastError = true)]
    private static extern int kill(int pid, int signal);

    [GeneratedRegex(@"^Peregrine serving .* at (\S+)$")]
    private static partial Regex ServingLine();
}
