using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>Change events applied to a snapshot: only the paths named change, and the rest is the same entries.</summary>
public sealed class IncrementalUpdateTests
{
    [Fact]
    public void ChangedFile_GetsANewEntry_AndEveryOtherEntryIsKept()
    {
        using var tree = new TempTree();
        for (var i = 0; i < 50; i++)
        {
            tree.Write($"d{i % 5}/f{i}.txt", $"file {i}");
        }

        var (options, first) = Index(tree.Root);
        tree.Write("d2/f7.txt", "file 7, rewritten");

        var result = Update(options, first, new ChangedPath("/d2/f7.txt", false));

        var next = result.Next!;
        Assert.True(next.TryFind("/d2/f7.txt", out var changed));
        Assert.Equal("file 7, rewritten".Length, changed!.Identity.Length);
        Assert.Equal(50, next.FileCount);
        foreach (var (path, entry) in first.Pairs.Where(pair => pair.Key != "/d2/f7.txt"))
        {
            Assert.True(next.TryFind(path, out var kept), path);
            Assert.Same(entry, kept);
        }

        first.TryFind("/d2/f7.txt", out var before);
        Assert.Equal([changed], result.Delta.Added);
        Assert.Equal([before!], result.Delta.Removed);
        Assert.True(first.TryFind("/d2/f7.txt", out var stillOld) && stillOld!.Identity.Length == "file 7".Length, "the old snapshot is left as it was");
    }

    [Fact]
    public void DeletedFile_IsRemoved_AndNewFileIsAdded()
    {
        using var tree = new TempTree();
        tree.Write("a.txt", "a");
        tree.Write("b.txt", "b");
        var (options, first) = Index(tree.Root);
        File.Delete(Path.Combine(tree.Root, "a.txt"));
        tree.Write("c.txt", "c");

        var next = Update(options, first, new ChangedPath("/a.txt", false), new ChangedPath("/c.txt", false)).Next!;

        Assert.False(next.TryFind("/a.txt", out _));
        Assert.True(next.TryFind("/c.txt", out _));
        Assert.Equal(2, next.FileCount);
    }

    [Fact]
    public void UnchangedFileNamedByAnEvent_KeepsItsEntry_AndNoSnapshotIsMade()
    {
        using var tree = new TempTree();
        tree.Write("a.txt", "a");
        var (options, first) = Index(tree.Root);

        var result = Update(options, first, new ChangedPath("/a.txt", false));

        Assert.Null(result.Next);
        Assert.Empty(result.Delta.Added);
    }

    [Fact]
    public void IndexDocumentWritten_IsServedAtItsFolder_AndRemoved_LeavesNoEntryThere()
    {
        using var tree = new TempTree();
        tree.Write("docs/page.txt", "page");
        var (options, first) = Index(tree.Root);
        Assert.False(first.TryFind("/docs/", out _));

        tree.Write("docs/index.html", "docs home");
        var second = Update(options, first, new ChangedPath("/docs/index.html", false)).Next!;
        Assert.True(second.TryFind("/docs/", out var home));
        Assert.Equal("/docs/index.html", home!.RelativePath);
        Assert.True(second.TryFind("/docs", out var redirect) && redirect!.IsRedirect);

        File.Delete(Path.Combine(tree.Root, "docs/index.html"));
        var third = Update(options, second, new ChangedPath("/docs/index.html", false)).Next!;
        Assert.False(third.TryFind("/docs/", out _));
        Assert.False(third.TryFind("/docs", out _));
    }

    [Fact]
    public void FileAddedToAListedFolder_AppearsInItsListing()
    {
        using var tree = new TempTree();
        tree.Write("files/a.txt", "a");
        var (options, first) = Index(tree.Root, o => o.DirectoryListing = true);
        tree.Write("files/b.txt", "bb");

        var next = Update(options, first, new ChangedPath("/files/b.txt", false)).Next!;

        Assert.True(next.TryFind("/files/", out var listing));
        Assert.Equal(2, listing!.Listing!.Count);
    }

    [Fact]
    public void FolderMovedIn_IsScannedWhole_AndMovedOut_TakesEverythingUnderIt()
    {
        using var tree = new TempTree();
        tree.Write("keep.txt", "keep");
        var (options, first) = Index(tree.Root);
        using var outside = new TempTree();
        outside.Write("release/index.html", "release");
        outside.Write("release/js/app.js", "app");
        Directory.Move(Path.Combine(outside.Root, "release"), Path.Combine(tree.Root, "release"));

        var second = Update(options, first, new ChangedPath("/release", true)).Next!;
        Assert.True(second.TryFind("/release/js/app.js", out _));
        Assert.True(second.TryFind("/release/", out _));
        Assert.Equal(3, second.FileCount);

        Directory.Move(Path.Combine(tree.Root, "release"), Path.Combine(outside.Root, "gone"));
        var third = Update(options, second, new ChangedPath("/release", true)).Next!;
        Assert.False(third.TryFind("/release/js/app.js", out _));
        Assert.False(third.TryFind("/release/", out _));
        Assert.False(third.TryFind("/release", out _));
        Assert.Equal(1, third.FileCount);
    }

    [Fact]
    public void FileWrittenAgainDuringTheRead_KeepsItsPreviousVersion_AndIsDeferred()
    {
        using var tree = new TempTree();
        tree.Write("a.txt", "version 1");
        var (options, first) = Index(tree.Root);
        first.TryFind("/a.txt", out var before);
        tree.Write("a.txt", "version 2 (half");

        var result = new IncrementalUpdate(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance)
            .Apply(first, [new ChangedPath("/a.txt", false)], stillSettled: _ => false, CancellationToken.None);

        Assert.Equal([new ChangedPath("/a.txt", false)], result.Deferred);
        Assert.True(result.Next is null || (result.Next.TryFind("/a.txt", out var kept) && ReferenceEquals(kept, before)));
    }

    [Fact]
    public void HiddenPath_IsIgnored()
    {
        using var tree = new TempTree();
        tree.Write("a.txt", "a");
        var (options, first) = Index(tree.Root);
        tree.Write(".git/config", "x");

        var result = Update(options, first, new ChangedPath("/.git/config", false), new ChangedPath("/.git", true));

        Assert.Null(result.Next);
    }

    [Fact]
    public void RescanWhileAFileIsBeingWritten_KeepsItsPreviousVersion()
    {
        // The settle rule of a whole rescan: a file a writer is at keeps the version indexed before.
        using var tree = new TempTree();
        tree.Write("a.txt", "version 1");
        var (options, first) = Index(tree.Root);
        first.TryFind("/a.txt", out var before);
        tree.Write("a.txt", "version 2, half written");
        var builder = new CatalogBuilder(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance);

        var second = builder.Build(first, CancellationToken.None, isBeingWritten: file => file.Relative == "/a.txt");

        Assert.True(second.TryFind("/a.txt", out var kept));
        Assert.Same(before, kept);
        Assert.Equal(1, builder.Unsettled);
    }

    private static (PeregrineOptions Options, CatalogSnapshot Snapshot) Index(string root, Action<PeregrineOptions>? configure = null)
    {
        var options = new PeregrineOptions { Root = root };
        configure?.Invoke(options);
        return (options, new CatalogBuilder(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance).Build());
    }

    private static UpdateResult Update(PeregrineOptions options, CatalogSnapshot current, params ChangedPath[] paths)
        => new IncrementalUpdate(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance)
            .Apply(current, paths, stillSettled: _ => true, CancellationToken.None);
}
