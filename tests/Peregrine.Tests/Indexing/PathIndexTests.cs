using Peregrine.Indexing;

namespace Peregrine.Tests.Indexing;

public sealed class PathIndexTests
{
    public static TheoryData<bool> BothHashes => new() { false, true };

    [Theory]
    [MemberData(nameof(BothHashes))]
    public void EveryKey_IsFound_WithItsOwnEntry(bool marvin)
    {
        var entries = Entries(Enumerable.Range(0, 50_000).Select(i => $"/d{i / 100}/f{i}.css"));

        var index = PathIndex.Create(entries, marvin);

        Assert.Equal(entries.Count, index.Count);
        Assert.Equal(marvin, index.UsesMarvin);
        foreach (var (key, entry) in entries)
        {
            Assert.True(index.TryFind(key.AsSpan(), out var found), key);
            Assert.Same(entry, found);
        }
    }

    [Theory]
    [MemberData(nameof(BothHashes))]
    public void NearMisses_AreNotFound(bool marvin)
    {
        var index = PathIndex.Create(Entries(["/", "/a", "/ab", "/abc/", "/abc/index.html", "/ü/ß.txt", "/x/" + new string('y', 5000)]), marvin);

        string[] misses =
        [
            "", "/A", "/b", "/abc", "/abc/index.htm", "/abc/index.html/", "/abc/index.htmm", "//a",
            "/u/ss.txt", "/x/" + new string('y', 4999), "/x/" + new string('y', 5001), "a", "\0",
        ];
        foreach (var miss in misses)
        {
            Assert.False(index.TryFind(miss.AsSpan(), out _), miss);
        }

        Assert.True(index.TryFind("/ü/ß.txt".AsSpan(), out _));
        Assert.True(index.TryFind(("/x/" + new string('y', 5000)).AsSpan(), out _));
    }

    [Fact]
    public void KeysDifferingInTheirLastCharacter_ReachTheirOwnEntries()
    {
        // Keys that differ only in the last character, for every length around the 8- and
        // 16-byte steps of the hash: each must reach its own entry.
        var keys = Enumerable.Range(1, 40).SelectMany(length => "abc".Select(last => new string('p', length) + last)).ToList();
        var entries = Entries(keys);

        var index = PathIndex.Create(entries);

        foreach (var (key, entry) in entries)
        {
            Assert.True(index.TryFind(key.AsSpan(), out var found), key);
            Assert.Same(entry, found);
        }

        Assert.False(index.TryFind("pppd".AsSpan(), out _));
    }

    [Fact]
    public void Pairs_ListEveryKeyOnce()
    {
        var entries = Entries(Enumerable.Range(0, 1000).Select(i => $"/{i}"));

        var pairs = PathIndex.Create(entries).Pairs.ToList();

        Assert.Equal(entries.Keys.Order(StringComparer.Ordinal), pairs.Select(pair => pair.Key).Order(StringComparer.Ordinal));
        Assert.All(pairs, pair => Assert.Same(entries[pair.Key], pair.Value));
    }

    [Fact]
    public void RandomKeys_KeepRunsShort_AndTheFastHash()
    {
        // At half load, a million keys make runs of about a hundred slots at most: far below the
        // limit past which the table would give up the fast hash.
        var index = PathIndex.Create(Entries(Enumerable.Range(0, 1_000_000).Select(i => $"/d{i / 1000:D4}/f{i % 1000:D4}.txt")));

        Assert.False(index.UsesMarvin);
        Assert.InRange(index.LongestRun(), 1, 300);
    }

    [Fact]
    public void With_AddsReplacesAndRemoves_AndLeavesTheOldIndexAsItWas()
    {
        var entries = Entries(Enumerable.Range(0, 20_000).Select(i => $"/d{i / 100}/f{i}.css"));
        var index = PathIndex.Create(entries);
        var replacement = Entries(["/d3/f300.css"])["/d3/f300.css"];
        var added = Entries(["/new.css"])["/new.css"];

        var next = index.With(new Dictionary<string, CatalogEntry?>
        {
            ["/d3/f300.css"] = replacement,
            ["/new.css"] = added,
            ["/d5/f500.css"] = null,
            ["/never-there.css"] = null,
        });

        Assert.Equal(20_000, next.Count);
        Assert.True(next.TryFind("/d3/f300.css".AsSpan(), out var found) && ReferenceEquals(found, replacement));
        Assert.True(next.TryFind("/new.css".AsSpan(), out found) && ReferenceEquals(found, added));
        Assert.False(next.TryFind("/d5/f500.css".AsSpan(), out _));
        Assert.Equal(20_000, index.Count);
        Assert.True(index.TryFind("/d5/f500.css".AsSpan(), out _));
        Assert.False(index.TryFind("/new.css".AsSpan(), out _));
        foreach (var (key, entry) in entries.Where(pair => pair.Key is not "/d3/f300.css" and not "/d5/f500.css"))
        {
            Assert.True(next.TryFind(key.AsSpan(), out found) && ReferenceEquals(found, entry), key);
        }
    }

    [Fact]
    public void With_OnATreeThatOutgrewItsShards_LaysThemOutAgain()
    {
        // Grown from empty one path at a time, as a deploy into an empty root is: every key is
        // still found, and no shard holds the whole tree.
        var index = PathIndex.Create(Entries([]));
        var all = Entries(Enumerable.Range(0, 5_000).Select(i => $"/f{i}"));
        foreach (var (key, entry) in all)
        {
            index = index.With(new Dictionary<string, CatalogEntry?> { [key] = entry });
        }

        Assert.Equal(5_000, index.Count);
        Assert.All(all, pair => Assert.True(index.TryFind(pair.Key.AsSpan(), out var found) && ReferenceEquals(found, pair.Value)));
        Assert.InRange(index.LongestRun(), 1, 300);
    }

    [Fact]
    public void AnEmptyTree_FindsNothing()
    {
        var index = PathIndex.Create(Entries([]));

        Assert.Equal(0, index.Count);
        Assert.False(index.TryFind("/".AsSpan(), out _));
        Assert.Empty(index.Pairs);
    }

    private static Dictionary<string, CatalogEntry> Entries(IEnumerable<string> keys)
        => keys.ToDictionary(key => key, key => CatalogEntry.ForDirectoryRedirect(key, key + "/"), StringComparer.Ordinal);
}
