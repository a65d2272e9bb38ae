using Microsoft.Extensions.Logging.Abstractions;
using Microsoft.Extensions.Options;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Live;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

/// <summary>
/// The compressor follows the snapshots the catalog publishes: it queues the entries a snapshot
/// brings and gives back the memory of the variants of those it drops. The catalog knows
/// nothing of it.
/// </summary>
public sealed class CompressorFollowTests : IDisposable
{
    private readonly CompressionHarness _harness = new();

    [Fact]
    public async Task EntryDroppedByTheNextSnapshot_GivesBackTheMemoryOfItsVariants()
    {
        var path = _harness.Tree.Write("a.html", CompressibleText());
        var budget = new MemoryBudget(long.MaxValue);
        using var compressor = new Compressor(_harness.Options.Compression, budget, _harness.Logger);
        var first = _harness.Index();
        compressor.OnPublished(first, null);
        await compressor.WhenIdle();
        Assert.True(budget.Used > 0);
        File.Delete(path);

        compressor.OnPublished(_harness.Rebuild(first), first);

        Assert.Equal(0, budget.Used);
    }

    [Fact]
    public async Task EntryKeptByTheNextSnapshot_KeepsItsVariants_AndIsNotCompressedAgain()
    {
        _harness.Tree.Write("kept.html", CompressibleText("kept"));
        var changed = _harness.Tree.Write("changed.html", CompressibleText("before"));
        var budget = new MemoryBudget(long.MaxValue);
        using var compressor = new Compressor(_harness.Options.Compression, budget, _harness.Logger);
        var first = _harness.Index();
        compressor.OnPublished(first, null);
        await compressor.WhenIdle();
        File.WriteAllBytes(changed, CompressibleText("after, and longer"));

        var second = _harness.Rebuild(first);
        compressor.OnPublished(second, first);
        await compressor.WhenIdle();

        var kept = _harness.Find(second, "/kept.html");
        Assert.Same(_harness.Find(first, "/kept.html"), kept);
        Assert.NotNull(_harness.Find(second, "/changed.html").Encoded);
        Assert.Equal(3, compressor.FilesProcessed);
        Assert.Equal(HeldBytes(kept) + HeldBytes(_harness.Find(second, "/changed.html")), budget.Used);
    }

    [Fact]
    public async Task EntryDroppedWhileQueued_IsNotPublishedAndHoldsNoMemory()
    {
        _harness.Options.Compression.MaxParallelism = 1;
        _harness.Tree.Write("big.html", [.. Enumerable.Range(0, 12).SelectMany(i => CompressibleText(i.ToString()))]);
        var smallPath = _harness.Tree.Write("small.html", CompressibleText());
        var first = _harness.Index();
        var big = _harness.Find(first, "/big.html");
        var small = _harness.Find(first, "/small.html");
        File.Delete(smallPath);
        var second = _harness.Rebuild(first);
        var budget = new MemoryBudget(long.MaxValue);
        using var compressor = new Compressor(_harness.Options.Compression, budget, _harness.Logger);

        // One worker: the small file waits behind the big one, and is dropped meanwhile.
        compressor.Enqueue([big, small]);
        compressor.OnPublished(second, first);
        await compressor.WhenIdle();

        Assert.Null(small.Encoded);
        Assert.Equal(HeldBytes(big), budget.Used);
    }

    [Fact]
    public async Task FollowedCatalog_HoldsInItsBudgetExactlyTheContentAndVariantsInForce()
    {
        // The catalog releases the file content of dropped entries, the compressor their
        // variants: after a change the budget holds what the snapshot in force holds, no more.
        _harness.Options.Watch.CoalescingDelay = TimeSpan.Zero;
        _harness.Tree.Write("same.html", CompressibleText("same"));
        var changing = _harness.Tree.Write("changing.html", CompressibleText("one"));
        using var catalog = new FileCatalog(Options.Create(_harness.Options), NullLoggerFactory.Instance);
        using var compressor = Compressor.Follow(catalog, NullLoggerFactory.Instance);
        catalog.Start();
        await catalog.Ready.WaitAsync(TimeSpan.FromSeconds(10));
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(30));
        var first = catalog.Current!;
        Assert.True(HeldBytes(_harness.Find(first, "/changing.html")) > 0);
        Assert.Equal(InForce(first), catalog.Budget.Used);

        File.WriteAllBytes(changing, CompressibleText("two, and longer"));

        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(10);
        while (DateTime.UtcNow < deadline
            && (catalog.Current == first || _harness.Find(catalog.Current!, "/changing.html").Encoded is null))
        {
            await Task.Delay(20);
        }

        // The first pass's variants are in; the final pass holds the memory of the ones it makes
        // from when it makes them until it has published them and given back those they replace.
        // The budget matches the snapshot once neither pass has work left.
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(30));
        var second = catalog.Current!;
        Assert.NotSame(first, second);
        Assert.NotNull(_harness.Find(second, "/changing.html").Encoded);
        Assert.Equal(InForce(second), catalog.Budget.Used);
    }

    [Fact]
    public async Task EntryDroppedWhileWaitingForTheFinalPass_LeavesItsQueueAtOnce_WithItsMemory()
    {
        _harness.Tree.Write("a.html", CompressibleText("a"));
        _harness.Tree.Write("b.html", CompressibleText("b"));
        _harness.Tree.Write("c.html", CompressibleText("c"));
        _harness.Options.Compression.MaxParallelism = 1;
        var budget = new MemoryBudget(long.MaxValue);
        using var compressor = new Compressor(_harness.Options.Compression, budget, _harness.Logger);
        using var release = new ManualResetEventSlim();
        var held = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
        compressor.VariantsPublished += (entry, _, final) =>
        {
            // The one final-pass thread is held at its first publication (bounded, so a failed
            // test cannot hang the run): the other two files wait in its queue meanwhile.
            if (final && held.TrySetResult(entry.RelativePath))
            {
                release.Wait(TimeSpan.FromSeconds(30));
            }
        };
        var first = _harness.Index();
        compressor.OnPublished(first, null);

        // Which file the final pass takes first follows the snapshot's order, which varies from
        // run to run: the one dropped is one of the two still waiting.
        var heldPath = await held.Task.WaitAsync(TimeSpan.FromSeconds(30));
        var waiting = compressor.Upgrading;
        var droppedPath = heldPath == "/a.html" ? "/b.html" : "/a.html";
        var dropped = Path.Combine(_harness.Tree.Root, droppedPath.TrimStart('/'));
        var droppedEntry = _harness.Find(first, droppedPath);
        var inUseBefore = budget.Used;
        var droppedBytes = HeldBytes(droppedEntry);
        File.Delete(dropped);

        compressor.OnPublished(_harness.Rebuild(first), first);

        // Out of the queue and its memory given back now, not when the final pass reaches it.
        Assert.Equal(2, waiting);
        Assert.Equal(1, compressor.Upgrading);
        Assert.True(droppedBytes > 0);
        Assert.Equal(inUseBefore - droppedBytes, budget.Used);
        release.Set();
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(30));
        Assert.Equal(0, compressor.Upgrading);
        Assert.Equal(2, compressor.FilesUpgraded);
    }

    public void Dispose() => _harness.Dispose();

    /// <summary>The bytes a snapshot holds in memory: file content and in-memory variants.</summary>
    private static long InForce(CatalogSnapshot snapshot) => snapshot.CachedBytes + snapshot.Files.Sum(HeldBytes);
}
