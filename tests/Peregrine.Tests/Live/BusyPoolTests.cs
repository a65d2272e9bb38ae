using System.Diagnostics;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Live;
using Peregrine.Sources;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// A change is published within a second while every thread-pool thread is busy, as on a server
/// under load: the publisher neither waits for a pool thread to start its scans nor for a timer's
/// callback to look again at a file that was still settling. In the live collection, which runs
/// alone: the rest of the suite would stall behind the taken pool.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class BusyPoolTests
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(1);

    [Fact]
    public void HelpedLoop_RunsEveryItemOnce_WithoutWaitingForAPoolThread()
    {
        using var pool = BusyPool.Take();
        foreach (var count in new[] { 1, 2, 3, 1000 })
        {
            var runs = new int[count];
            var watch = Stopwatch.StartNew();
            HelpedLoop.For(count, i => Interlocked.Increment(ref runs[i]), CancellationToken.None);

            Assert.True(watch.Elapsed < TimeSpan.FromMilliseconds(250), $"{count} items took {watch.ElapsedMilliseconds} ms with the pool busy");
            Assert.All(runs, run => Assert.Equal(1, run));
        }

        Assert.True(pool.StillTaken, "the pool came free meanwhile: nothing was shown");
    }

    [Fact]
    public async Task NewFileInANewFolder_IsPublishedWithinOneSecond_WhileEveryPoolThreadIsBusy()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        using var catalog = new FileCatalog(new PeregrineOptions { Root = tree.Root }, NullLoggerFactory.Instance);
        catalog.Start();
        await HangGuard.WithinAsync(catalog.Ready, TimeSpan.FromSeconds(30));

        // From here the test waits on its own thread: an await would not come back.
        using var pool = BusyPool.Take();

        // The request for a rescan stands in for the watcher's event: FileSystemWatcher (the
        // portable parts) raises its events on the pool, which is the platform's to answer for.
        // With the settle rule (the portable parts, or a rescan with close events) the file is
        // taken once it has held still for the settle time, half a second.
        var timing = PublicationClock.Time(
            catalog,
            () =>
            {
                tree.Write("docs/new.txt", "fresh");
                catalog.RequestRefresh();
            },
            snapshot => snapshot.TryFind("/docs/new.txt", out _),
            TimeSpan.FromSeconds(10));

        Assert.True(timing.Own < s_limit, $"took {timing}");
        Assert.True(pool.StillTaken, "the pool came free meanwhile: nothing was shown");
    }

    /// <summary>
    /// Every thread the pool has, and the threads it adds for a while after, held by work items
    /// that wait until disposal; more items than threads stay queued behind them.
    /// </summary>
    private sealed class BusyPool : IDisposable
    {
        private readonly ManualResetEventSlim _release = new();
        private readonly int _queued;
        private int _started;

        private BusyPool()
        {
            // The pool adds a thread about every half second while its queue does not move, so a
            // few hundred items outlast any test here.
            _queued = ThreadPool.ThreadCount + 256;
            for (var i = 0; i < _queued; i++)
            {
                ThreadPool.UnsafeQueueUserWorkItem(
                    static pool =>
                    {
                        Interlocked.Increment(ref pool._started);
                        pool._release.Wait();
                    },
                    this,
                    preferLocal: false);
            }
        }

        /// <summary>True while some of the items have not started: no pool thread was free.</summary>
        public bool StillTaken => Volatile.Read(ref _started) < _queued;

        public static BusyPool Take()
        {
            var pool = new BusyPool();

            // Until the pool's threads are all held: no item has started for a while, and some wait.
            var bound = Stopwatch.StartNew();
            var started = -1;
            while (bound.Elapsed < TimeSpan.FromSeconds(5) && (Volatile.Read(ref pool._started) != started || !pool.StillTaken))
            {
                started = Volatile.Read(ref pool._started);
                Thread.Sleep(100);
            }

            return pool;
        }

        public void Dispose() => _release.Set();
    }
}
