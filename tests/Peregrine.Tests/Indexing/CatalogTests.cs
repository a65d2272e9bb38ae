using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Indexing;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Indexing;

public sealed class CatalogTests
{
    [Fact]
    public void SameBytes_InTwoRoots_GiveTheSameETag()
    {
        // The ETag comes from content alone (not mtime or inode), so two servers agree.
        using var first = new TempTree();
        using var second = new TempTree();
        var a = first.Write("a.txt", "same bytes");
        second.Write("elsewhere/b.txt", "same bytes");
        File.SetLastWriteTimeUtc(a, new DateTime(2001, 1, 1, 0, 0, 0, DateTimeKind.Utc));

        var one = Build(first.Root).TryFind("/a.txt", out var x) ? x : null;
        var two = Build(second.Root).TryFind("/elsewhere/b.txt", out var y) ? y : null;

        Assert.Equal(one!.Identity.ETag, two!.Identity.ETag);
    }

    [Fact]
    public void DifferentBytes_GiveDifferentETags()
    {
        using var tree = new TempTree();
        tree.Write("a.txt", "one");
        tree.Write("b.txt", "two");

        var snapshot = Build(tree.Root);

        snapshot.TryFind("/a.txt", out var a);
        snapshot.TryFind("/b.txt", out var b);
        Assert.NotEqual(a!.Identity.ETag, b!.Identity.ETag);
    }

    [Fact]
    public void MemoryBudget_KeepsSmallestFilesInMemoryAndStreamsTheRest()
    {
        using var tree = new TempTree();
        tree.Write("small.txt", new byte[100]);
        tree.Write("medium.txt", new byte[1000]);
        tree.Write("large.txt", new byte[10_000]);

        var snapshot = Build(tree.Root, options => options.MemoryBudget = 1500);

        Assert.True(snapshot.TryFind("/small.txt", out var small) && small.Identity.Content is not null);
        Assert.True(snapshot.TryFind("/medium.txt", out var medium) && medium.Identity.Content is not null);
        Assert.True(snapshot.TryFind("/large.txt", out var large) && large.Identity.Content is null);
        Assert.Equal(1100, snapshot.CachedBytes);
    }

    [Fact]
    public void UnknownExtension_IsSkippedWhenUnknownTypesAreNotServed()
    {
        using var tree = new TempTree();
        tree.Write("a.unknownext", "x");
        tree.Write("b.txt", "x");

        var snapshot = Build(tree.Root, options => options.ServeUnknownFileTypes = false);

        Assert.False(snapshot.TryFind("/a.unknownext", out _));
        Assert.True(snapshot.TryFind("/b.txt", out _));
    }

    [Fact]
    public void ContentTypeOverride_WinsOverTheFrameworkTable()
    {
        using var tree = new TempTree();
        tree.Write("notes.md", "# hi");
        tree.Write("data.json", "{}");

        var snapshot = Build(tree.Root, options =>
        {
            options.ContentTypes[".md"] = "text/markdown";
            options.ContentTypes[".json"] = "application/vnd.example+json";
        });

        snapshot.TryFind("/notes.md", out var md);
        snapshot.TryFind("/data.json", out var json);
        Assert.Equal("text/markdown; charset=utf-8", md!.ContentType.ToString());
        Assert.Equal("application/vnd.example+json", json!.ContentType.ToString());
    }

    [Theory]
    [InlineData("app.3f9a1c2b.js", true)]
    [InlineData("chunk-5e7d2a91c0.css", true)]
    [InlineData("index-BkQ3x9Zt.js", true)]
    [InlineData("main.0f1e2d3c4b5a6978.bundle.js", false)]
    [InlineData("app.js", false)]
    [InlineData("jquery-3.7.1.min.js", false)]
    [InlineData("report-20240101.pdf", false)]
    [InlineData("my-component2.js", false)]
    [InlineData("deadbeef.js", false)]
    [InlineData("x.deadbeef.js", false)]
    [InlineData("bootstrap.bundle.min.js", false)]
    [InlineData("Makefile", false)]
    public void Fingerprint_IsRecognisedOnlyWhenTheNameLooksHashed(string name, bool expected)
    {
        Assert.Equal(expected, Fingerprint.IsFingerprinted(name));
    }

    [Fact]
    public void PhysicalPath_IsTheResolvedFile_ForPlainFilesAndLinks()
    {
        using var tree = new TempTree();
        tree.Write("real/a.txt", "a");
        tree.Write("b.txt", "b");
        File.CreateSymbolicLink(Path.Combine(tree.Root, "link.txt"), Path.Combine(tree.Root, "real/a.txt"));

        var snapshot = Build(tree.Root);
        var root = Path.TrimEndingDirectorySeparator(snapshot.Root);

        snapshot.TryFind("/b.txt", out var plain);
        snapshot.TryFind("/link.txt", out var link);
        Assert.Equal(root + "/b.txt", plain!.PhysicalPath);
        Assert.True(plain.IsAt(root + "/b.txt"));
        Assert.False(plain.IsAt(root + "/c.txt"));
        Assert.Equal(root + "/real/a.txt", link!.PhysicalPath);
        Assert.True(link.IsAt(root + "/real/a.txt"));
        Assert.False(link.IsAt(root + "/link.txt"));
    }

    [Fact]
    public void Rebuild_ReusesUnchangedEntries_AndRebuildsChangedOnes()
    {
        // The scan's time (lstat) and the built entry's (fstat of the open file) must agree to
        // the tick, or every rebuild would read and hash the whole tree again.
        using var tree = new TempTree();
        tree.Write("same.txt", "same");
        var changed = tree.Write("changed.txt", "before");
        var options = new PeregrineOptions { Root = tree.Root };
        var builder = new CatalogBuilder(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance);
        var first = builder.Build();
        File.WriteAllText(changed, "after, longer");

        var second = builder.Build(first);

        first.TryFind("/same.txt", out var sameBefore);
        second.TryFind("/same.txt", out var sameAfter);
        first.TryFind("/changed.txt", out var changedBefore);
        second.TryFind("/changed.txt", out var changedAfter);
        Assert.Same(sameBefore, sameAfter);
        Assert.NotSame(changedBefore, changedAfter);
        Assert.Equal(13, changedAfter!.Identity.Length);
    }

    [Fact]
    public async Task LinksThatLoop_EndTheScan_AndEachRealFolderIsWalkedOnce()
    {
        // A link back up the tree would make the scan endless; each real folder is walked once,
        // under its shallowest path. Bounded: an endless scan must fail the test, not hang it.
        using var tree = new TempTree();
        tree.Write("a/b/file.txt", "x");
        Directory.CreateSymbolicLink(Path.Combine(tree.Root, "a/b/up"), Path.Combine(tree.Root, "a"));
        Directory.CreateSymbolicLink(Path.Combine(tree.Root, "a/b/self"), Path.Combine(tree.Root, "a/b"));

        var build = Task.Run(() => Build(tree.Root));
        Assert.Same(build, await Task.WhenAny(build, Task.Delay(TimeSpan.FromSeconds(10))));
        var snapshot = await build;

        Assert.Equal(1, snapshot.FileCount);
        Assert.True(snapshot.TryFind("/a/b/file.txt", out _));
        Assert.False(snapshot.TryFind("/a/b/up/b/file.txt", out _));
        Assert.False(snapshot.TryFind("/a/b/self/file.txt", out _));
    }

    private static CatalogSnapshot Build(string root, Action<PeregrineOptions>? configure = null)
    {
        var options = new PeregrineOptions { Root = root };
        configure?.Invoke(options);
        return new CatalogBuilder(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance).Build();
    }
}
