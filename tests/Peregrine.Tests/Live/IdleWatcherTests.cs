using System.Globalization;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Live;

/// <summary>
/// The inotify watcher's thread sleeps while nothing under the root changes, rather than waking
/// on a timer to look (it woke 50 times a second, on the core an idle server shares with
/// everything else), and a change made after a long sleep is still published at once. In the
/// live collection, which runs alone: the watcher's thread is told from the others by being the
/// one this test's catalog started.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class IdleWatcherTests
{
    private static readonly string ThreadName = InotifyWatcher.ThreadName[..15];

    [NativeFact("the inotify watcher")]
    public async Task IdleWatcher_DoesNotWake_AndAChangeAfterTheSleepIsStillPublished()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        var before = OwnThreads.Named(ThreadName);
        using var catalog = new FileCatalog(new PeregrineOptions { Root = tree.Root }, NullLoggerFactory.Instance);
        catalog.Start();
        await HangGuard.WithinAsync(catalog.Ready, TimeSpan.FromSeconds(30));
        var thread = Assert.Single(OwnThreads.Named(ThreadName).Except(before));

        // Whatever start-up left (the first scan's own opens and closes of the files) drains first.
        await Task.Delay(TimeSpan.FromMilliseconds(500));
        var first = Wakes(thread);
        await Task.Delay(TimeSpan.FromSeconds(1));
        var woke = Wakes(thread) - first;
        Assert.True(woke <= 2, $"the watcher's thread woke {woke} times in a second with nothing changing");

        var timing = PublicationClock.Time(
            catalog,
            () => tree.Write("docs/new.txt", "fresh"),
            snapshot => snapshot.TryFind("/docs/new.txt", out _),
            TimeSpan.FromSeconds(10));
        Assert.True(timing.Own < TimeSpan.FromSeconds(1), $"took {timing}");
    }

    /// <summary>How many times the thread gave up the CPU of its own accord: each wait that ended is one.</summary>
    private static long Wakes(string thread)
    {
        foreach (var line in (OwnThreads.Read(thread, "status") ?? "").Split('\n'))
        {
            if (line.StartsWith("voluntary_ctxt_switches:", StringComparison.Ordinal))
            {
                return long.Parse(line["voluntary_ctxt_switches:".Length..].Trim(), CultureInfo.InvariantCulture);
            }
        }

        throw new InvalidOperationException($"no voluntary_ctxt_switches for thread {thread}");
    }
}
