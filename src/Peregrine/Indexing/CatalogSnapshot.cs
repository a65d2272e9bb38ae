using System.Diagnostics.CodeAnalysis;
using Peregrine.Sources;

namespace Peregrine.Indexing;

/// <summary>
/// One index of the site: request path (relative to the mount point, leading slash, decoded) to
/// entry, in a <see cref="PathIndex"/> built once and never changed. A request reads one
/// snapshot reference and sees one consistent site. Paths compare ordinally, character for
/// character: case-sensitive, as the file systems Peregrine is meant for are.
/// </summary>
internal sealed class CatalogSnapshot
{
    private readonly PathIndex _index;

    public CatalogSnapshot(Dictionary<string, CatalogEntry> entries, int fileCount, long cachedBytes, Mount[] mounts)
    {
        Mounts = mounts;
        Root = MountTable.RootOf(mounts).Root;
        _index = PathIndex.Create(entries);
        FileCount = fileCount;
        CachedBytes = cachedBytes;
        foreach (var entry in entries.Values)
        {
            HasLinks |= entry.IsLinked;
        }
    }

    private CatalogSnapshot(CatalogSnapshot previous, PathIndex index, int fileCount, long cachedBytes, bool hasLinks)
    {
        Mounts = previous.Mounts;
        Root = previous.Root;
        _index = index;
        FileCount = fileCount;
        CachedBytes = cachedBytes;
        HasLinks = hasLinks;
    }

    /// <summary>
    /// True when some file is reached through a symbolic link: a change to the link's target
    /// names the target's path, not the link's, so such a tree is rescanned whole on a change.
    /// </summary>
    public bool HasLinks { get; }

    /// <summary>
    /// The next snapshot: this one with <paramref name="changes"/> applied (a path with an entry
    /// is added or replaced, a path with <see langword="null"/> removed), sharing everything
    /// else. The cost follows the number of changes, not the size of the tree.
    /// </summary>
    public CatalogSnapshot With(IReadOnlyDictionary<string, CatalogEntry?> changes)
    {
        var fileCount = FileCount;
        var cachedBytes = CachedBytes;
        var hasLinks = HasLinks;
        foreach (var (path, entry) in changes)
        {
            if (TryFind(path, out var old) && old.IsFile && string.Equals(old.RelativePath, path, StringComparison.Ordinal))
            {
                fileCount--;
                cachedBytes -= old.Identity.Content?.Length ?? 0;
            }

            if (entry is { IsFile: true } && string.Equals(entry.RelativePath, path, StringComparison.Ordinal))
            {
                fileCount++;
                cachedBytes += entry.Identity.Content?.Length ?? 0;
                hasLinks |= entry.IsLinked;
            }
        }

        return new CatalogSnapshot(this, _index.With(changes), fileCount, cachedBytes, hasLinks);
    }

    /// <summary>The root as indexed, every link resolved.</summary>
    public string Root { get; }

    /// <summary>
    /// The folders indexed, as they resolved (a rename or a link swap changes one), in the order
    /// they take precedence: the root, and the mounts of <see cref="PeregrineOptions.Mounts"/>.
    /// </summary>
    public Mount[] Mounts { get; }

    public int FileCount { get; }

    /// <summary>Bytes of file content held in memory.</summary>
    public long CachedBytes { get; }

    public int Count => _index.Count;

    /// <summary>Every entry; an entry reached by two paths (a folder and its default document) comes twice.</summary>
    public IEnumerable<CatalogEntry> Entries => _index.Pairs.Select(pair => pair.Value);

    /// <summary>Every path and its entry.</summary>
    public IEnumerable<KeyValuePair<string, CatalogEntry>> Pairs => _index.Pairs;

    /// <summary>
    /// Every file entry once: a default document comes under its own path only, not its folder's;
    /// a page with a clean URL comes through the redirect under its own path.
    /// </summary>
    public IEnumerable<CatalogEntry> Files => _index.Pairs
        .Where(pair => string.Equals(pair.Key, pair.Value.RelativePath, StringComparison.Ordinal))
        .Select(pair => pair.Value.Canonical ?? pair.Value)
        .Where(entry => entry.IsFile);

    /// <summary>
    /// True when <paramref name="entry"/> itself is in this snapshot, not merely an entry for
    /// its path: a file that changed has a new entry, and the old one is dropped.
    /// </summary>
    public bool Holds(CatalogEntry entry)
        => TryFindFile(entry.RelativePath, out var found) && ReferenceEquals(found, entry);

    /// <summary>
    /// The file indexed at <paramref name="relativePath"/>, its own path under the root: the file
    /// itself where a clean-URL redirect takes its place in the index.
    /// </summary>
    public bool TryFindFile(ReadOnlySpan<char> relativePath, [MaybeNullWhen(false)] out CatalogEntry entry)
    {
        if (!_index.TryFind(relativePath, out entry))
        {
            return false;
        }

        entry = entry.Canonical ?? entry;
        return true;
    }

    /// <summary>Looks a path up without allocating: the span is hashed and compared in place.</summary>
    public bool TryFind(ReadOnlySpan<char> path, [MaybeNullWhen(false)] out CatalogEntry entry)
        => _index.TryFind(path, out entry);
}
