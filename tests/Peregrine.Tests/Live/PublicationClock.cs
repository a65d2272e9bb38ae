using System.Diagnostics;
using System.Globalization;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// How long a change on disk took to reach clients, and how much of that time the kernel kept
/// the watcher from running.
/// </summary>
/// <param name="Elapsed">From just before the change was made to the moment the catalog put in force the snapshot that holds it: from then on every request is answered from it.</param>
/// <param name="Starved">The part of <paramref name="Elapsed"/> that the thread that published the snapshot (the catalog's publisher) spent ready to run but waiting for a CPU that other work held.</param>
internal readonly record struct ChangeTiming(TimeSpan Elapsed, TimeSpan Starved)
{
    /// <summary>The time the server itself took: what a user sees on a machine that gives it the CPU it asks for.</summary>
    public TimeSpan Own => Elapsed - Starved;

    public override string ToString()
        => string.Create(CultureInfo.InvariantCulture, $"{Own.TotalMilliseconds:F0} ms of the server's own ({Elapsed.TotalMilliseconds:F0} ms in all, {Starved.TotalMilliseconds:F0} ms of it waiting for a CPU)");
}

/// <summary>
/// Times a change on disk to its publication by the catalog, on the publisher thread, rather
/// than by polling over HTTP: a poll sees the change one request later, and on a loaded machine
/// that request alone can take longer than the change did. The promise checked is the server's
/// (a change reaches clients within a second), so the time its publisher spent runnable but off
/// the CPU, because other work held every core, is measured from the kernel's own count (the run
/// delay in <c>/proc/self/task/TID/schedstat</c>, sched_stats(7)) and reported apart. The
/// watcher's thread, which read the events and posted them, is not set apart: tests run side by
/// side in this process, and only the publisher names itself by publishing. Sleeping is not counted there: the watcher's poll timeout and coalescing
/// delay, both part of the server's latency, stay in its own time. On a machine with a core to
/// spare the run delay is a few milliseconds and the measure is the wall clock; under
/// starvation a wait that falls inside the coalescing delay, which it did not lengthen, is set
/// apart too, so the server's own time can read low by up to that delay (100 ms by default).
/// </summary>
internal static class PublicationClock
{
    // What the runtime names the publisher's thread, as the kernel keeps it (15 bytes at most).
    private static readonly string PublisherThread = FileCatalog.PublisherThreadName[..15];

    /// <summary>
    /// Makes <paramref name="change"/> and waits (bounded) until the catalog of
    /// <paramref name="host"/> publishes a snapshot for which <paramref name="holds"/> is true.
    /// </summary>
    public static async Task<ChangeTiming> TimeAsync(PeregrineHost host, Action change, Func<CatalogSnapshot, bool> holds)
    {
        using var watch = new Watch(host.Services.GetRequiredService<FileCatalog>(), holds);
        watch.Start();
        change();
        return watch.TimingOf(await HangGuard.WithinAsync(watch.Published, TimeSpan.FromSeconds(30)));
    }

    /// <summary>
    /// <see cref="TimeAsync"/> for a catalog of the test's own, waiting on the calling thread: for
    /// a test that keeps every thread-pool thread busy, where an await would not come back.
    /// </summary>
    public static ChangeTiming Time(FileCatalog catalog, Action change, Func<CatalogSnapshot, bool> holds, TimeSpan bound)
    {
        using var watch = new Watch(catalog, holds);
        watch.Start();
        change();
        Assert.True(watch.Published.Wait(bound), $"not published within {bound.TotalSeconds} s");
        return watch.TimingOf(watch.Published.Result);
    }

    /// <summary>Follows a catalog's publications, from <see cref="Start"/>, until the first that holds what is waited for.</summary>
    private sealed class Watch : IDisposable
    {
        private readonly FileCatalog _catalog;
        private readonly Func<CatalogSnapshot, bool> _holds;
        private readonly TaskCompletionSource<Publication> _published = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private long _start;
        private Dictionary<string, long> _before = [];

        public Watch(FileCatalog catalog, Func<CatalogSnapshot, bool> holds)
        {
            _catalog = catalog;
            _holds = holds;
            catalog.Published += OnPublished;
        }

        public Task<Publication> Published => _published.Task;

        public void Start() => (_start, _before) = PublicationClock.Start();

        public ChangeTiming TimingOf(Publication publication)
        {
            // A publisher that started after the change (another test's) sets nothing apart.
            var starved = _before.TryGetValue(publication.Thread, out var delayBefore) ? publication.RunDelay - delayBefore : 0;
            return new ChangeTiming(Stopwatch.GetElapsedTime(_start, publication.At), TimeSpan.FromTicks(starved / 100));
        }

        public void Dispose() => _catalog.Published -= OnPublished;

        private void OnPublished(CatalogSnapshot snapshot, CatalogSnapshot? previous, SnapshotDelta? delta)
        {
            // On the publishing thread, once the snapshot is the one requests read (it is put in
            // force before the event is raised).
            if (!_published.Task.IsCompleted && _holds(snapshot))
            {
                // The run delay read before the time: a wait in between counts as the server's.
                var thread = Path.GetFileName(Directory.ResolveLinkTarget("/proc/thread-self", returnFinalTarget: false)!.FullName);
                var runDelay = RunDelay("/proc/thread-self/schedstat") ?? 0;
                _published.TrySetResult(new Publication(Stopwatch.GetTimestamp(), thread, runDelay));
            }
        }
    }

    /// <summary>When a snapshot was put in force, by which thread, and that thread's run delay then (ns).</summary>
    private readonly record struct Publication(long At, string Thread, long RunDelay);

    /// <summary>
    /// The start time, and the publishers' run delays at that time. Read on both sides of it until
    /// they agree: a delay read only before the start would set apart waits that came before
    /// it, and one read only after would count the waits between as the server's own (which is
    /// what is kept if they never agree).
    /// </summary>
    private static (long Start, Dictionary<string, long> RunDelays) Start()
    {
        for (var attempt = 0; ; attempt++)
        {
            var before = PublisherRunDelays();
            var start = Stopwatch.GetTimestamp();
            var after = PublisherRunDelays();
            if (attempt == 100 || (before.Count == after.Count && before.All(delay => after.TryGetValue(delay.Key, out var same) && same == delay.Value)))
            {
                return (start, after);
            }
        }
    }

    /// <summary>The run delay (ns) of every publisher thread in this process, by thread id.</summary>
    private static Dictionary<string, long> PublisherRunDelays()
    {
        var delays = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var thread in OwnThreads.Named(PublisherThread))
        {
            if (RunDelay(OwnThreads.Read(thread, "schedstat")) is { } delay)
            {
                delays[thread] = delay;
            }
        }

        return delays;
    }

    /// <summary>The second field of a schedstat file: nanoseconds spent waiting on a run queue.</summary>
    private static long? RunDelay(string? schedstat)
        => schedstat?.Split(' ') is [_, var waiting, ..] ? long.Parse(waiting, CultureInfo.InvariantCulture) : null;
}
