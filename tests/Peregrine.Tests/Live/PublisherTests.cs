using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// One thread makes and publishes every snapshot: the first index, changes the watcher posts,
/// whole rescans and the snapshots of files written for too long. Watchers and timers only post.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class PublisherTests
{
    [Fact]
    public async Task EverySnapshot_IsPublishedByThePublisherThread()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        tree.Write("a.txt", "version 1");
        var options = new PeregrineOptions { Root = tree.Root };
        options.Watch.SettleTime = TimeSpan.FromMilliseconds(200);
        options.Watch.OpenWriteLimit = TimeSpan.FromMilliseconds(600);
        using var catalog = new FileCatalog(options, NullLoggerFactory.Instance);
        var publishers = new List<string?>();
        var published = new SemaphoreSlim(0);
        catalog.Published += (_, _, _) =>
        {
            lock (publishers)
            {
                publishers.Add(Thread.CurrentThread.Name);
            }

            published.Release();
        };

        catalog.Start();
        await HangGuard.WithinAsync(catalog.Ready, TimeSpan.FromSeconds(10));

        // An incremental update (the watcher's close event), a deletion, a whole rescan, and a
        // file held open and written for longer than the open-write limit.
        tree.Write("a.txt", "version 2");
        await UntilAsync(() => catalog.Current!.TryFind("/a.txt", out var a) && a.Identity.Length == "version 2".Length, "a.txt's new version");
        File.Delete(Path.Combine(tree.Root, "a.txt"));
        await UntilAsync(() => !catalog.Current!.TryFind("/a.txt", out _), "a.txt gone");
        var before = catalog.Generation;
        tree.Write("b.txt", "rescanned");
        catalog.RequestRefresh();
        await UntilAsync(() => catalog.Current!.TryFind("/b.txt", out _) && catalog.Generation > before, "a rescan");
        await using (var log = new FileStream(Path.Combine(tree.Root, "log.txt"), FileMode.CreateNew, FileAccess.Write, FileShare.ReadWrite))
        {
            var until = DateTime.UtcNow + TimeSpan.FromSeconds(10);
            while (!catalog.Current!.TryFind("/log.txt", out var entry) || entry.Identity.Length == 0)
            {
                Assert.True(DateTime.UtcNow < until, "the log held open was never published");
                await log.WriteAsync("line\n"u8.ToArray());
                await log.FlushAsync();
                await Task.Delay(50);
            }
        }

        lock (publishers)
        {
            Assert.True(publishers.Count >= 5, $"{publishers.Count} publications");
            Assert.All(publishers, name => Assert.Equal(FileCatalog.PublisherThreadName, name));
        }
    }

    private static async Task UntilAsync(Func<bool> condition, string what)
    {
        var until = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < until, $"not within 10 s: {what}");
            await Task.Delay(20);
        }
    }
}
