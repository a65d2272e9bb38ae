using Peregrine.Sources;
using Peregrine.Sources.Bucket;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>The listed times the index reads: found by the version's real path and the file's path under it.</summary>
public sealed class ListedTimesTests
{
    private static readonly DateTime s_listed = new(2026, 11, 26, 6, 30, 15, 250, DateTimeKind.Utc);

    [Fact]
    public void Find_AFileOfAVersionHeld_TheListedTime_AndNothingElse()
    {
        using var tree = new TempTree();
        var version = Directory.CreateDirectory(Path.Combine(tree.Root, "v1")).FullName;
        var times = new ListedTimes();
        times.Add(version, Objects(("a/b.css", s_listed)));
        var root = FileSystemProbe.RealPath(version)!;

        Assert.Equal(s_listed.Ticks, times.Find(root, "/a/b.css"));
        Assert.Null(times.Find(root, "/a/c.css"));
        Assert.Null(times.Find(Path.Combine(tree.Root, "v2"), "/a/b.css"));
    }

    [Fact]
    public void AddedThroughALink_FoundByTheRealPath_ForgottenByTheLinkedPath()
    {
        using var tree = new TempTree();
        var real = Directory.CreateDirectory(Path.Combine(tree.Root, "real", "v3")).FullName;
        var linked = Path.Combine(tree.Root, "linked");
        Directory.CreateSymbolicLink(linked, Path.Combine(tree.Root, "real"));
        var times = new ListedTimes();

        // The index reaches the version by its real path, as a mount's root is resolved.
        times.Add(Path.Combine(linked, "v3"), Objects(("index.html", s_listed)));
        Assert.Equal(s_listed.Ticks, times.Find(FileSystemProbe.RealPath(real)!, "/index.html"));

        times.Forget(Path.Combine(linked, "v3"));
        Assert.Null(times.Find(FileSystemProbe.RealPath(real)!, "/index.html"));
    }

    private static Dictionary<string, BucketObject> Objects(params (string Path, DateTime Listed)[] files)
        => files.ToDictionary(f => f.Path, f => new BucketObject("site/" + f.Path, f.Path, "\"e\"", 1, f.Listed), StringComparer.Ordinal);
}
