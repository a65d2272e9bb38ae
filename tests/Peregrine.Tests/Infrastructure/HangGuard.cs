using System.Diagnostics;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// A bound that stops a test from hanging the run, counted in the time the test process was
/// given the CPU rather than on the wall clock. A machine whose other work holds every core can
/// stop a test run (at SCHED_IDLE, or merely outweighed) for many seconds, and a wall-clock
/// bound then fires at a wait that was never slow, only not run: a 17 s stop of the test host
/// and its server failed a 15 s wait for the server's address. The guard ticks every
/// <see cref="Tick"/> and counts a tick that comes late as one tick, so the time the process
/// was not run is left out, and a wait that really hangs still ends after the bound.
/// </summary>
internal sealed class HangGuard : IDisposable
{
    private static readonly TimeSpan Tick = TimeSpan.FromMilliseconds(100);

    // Not disposed: a caller may still read the token after the guard is done with, and sources
    // without a timer of their own hold nothing that needs freeing.
    private readonly CancellationTokenSource _expired = new();
    private readonly CancellationTokenSource _done = new();

    public HangGuard(TimeSpan bound)
    {
        Bound = bound;
        _ = CountAsync();
    }

    public TimeSpan Bound { get; }

    /// <summary>Cancelled once the process has been given <see cref="Bound"/> of time to run.</summary>
    public CancellationToken Token => _expired.Token;

    /// <summary><paramref name="task"/>'s result, or a <see cref="TimeoutException"/> once the bound is spent.</summary>
    public static async Task<T> WithinAsync<T>(Task<T> task, TimeSpan bound)
    {
        await WithinAsync((Task)task, bound);
        return await task;
    }

    /// <summary>Completes with <paramref name="task"/>, or throws a <see cref="TimeoutException"/> once the bound is spent.</summary>
    public static async Task WithinAsync(Task task, TimeSpan bound)
    {
        using var guard = new HangGuard(bound);
        try
        {
            await task.WaitAsync(guard.Token);
        }
        catch (OperationCanceledException) when (guard.Token.IsCancellationRequested && !task.IsCompleted)
        {
            throw new TimeoutException($"Not done within {bound.TotalSeconds} s of the test run's own time.");
        }
    }

    public void Dispose() => _done.Cancel();

    private async Task CountAsync()
    {
        var counted = TimeSpan.Zero;
        try
        {
            while (counted < Bound)
            {
                var before = Stopwatch.GetTimestamp();
                await Task.Delay(Tick, _done.Token);
                var waited = Stopwatch.GetElapsedTime(before);
                counted += waited < Tick + Tick ? waited : Tick;
            }

            _expired.Cancel();
        }
        catch (OperationCanceledException)
        {
            // Disposed: what it guarded is over.
        }
    }
}
