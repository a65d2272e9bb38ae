using System.Diagnostics.CodeAnalysis;

namespace Peregrine.Catalog;

/// <summary>
/// One index of the site: request path (relative to the mount point, leading slash, decoded) to
/// entry, in a <see cref="PathIndex"/> built once and never changed. A request reads one
/// snapshot reference and sees one consistent site. Paths compare ordinally, character for
/// character: case-sensitive, as the file systems Peregrine is meant for are.
/// </summary>
internal sealed class CatalogSnapshot
{
    private readonly PathIndex _index;

    public CatalogSnapshot(Dictionary<string, CatalogEntry> entries, int fileCount, long cachedBytes, string root, FileIdentity rootIdentity)
    {
        Root = root;
        RootIdentity = rootIdentity;
        _index = PathIndex.Create(entries);
        FileCount = fileCount;
        CachedBytes = cachedBytes;
    }

    /// <summary>The root as indexed, every link resolved.</summary>
    public string Root { get; }

    /// <summary>Which folder the root was when indexed: a rename or link swap changes it.</summary>
    public FileIdentity RootIdentity { get; }

    public int FileCount { get; }

    /// <summary>Bytes of file content held in memory.</summary>
    public long CachedBytes { get; }

    public int Count => _index.Count;

    /// <summary>Every entry; an entry reached by two paths (a folder and its default document) comes twice.</summary>
    public IEnumerable<CatalogEntry> Entries => _index.Pairs.Select(pair => pair.Value);

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
