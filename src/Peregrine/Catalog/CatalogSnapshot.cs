using System.Collections.Frozen;
using System.Diagnostics.CodeAnalysis;

namespace Peregrine.Catalog;

/// <summary>
/// An immutable index from request path (relative to the mount point, leading slash, decoded)
/// to entry. A request reads one snapshot reference and sees one consistent site.
/// </summary>
internal sealed class CatalogSnapshot
{
    private readonly FrozenDictionary<string, CatalogEntry> _entries;
    private readonly FrozenDictionary<string, CatalogEntry>.AlternateLookup<ReadOnlySpan<char>> _lookup;

    public CatalogSnapshot(Dictionary<string, CatalogEntry> entries, int fileCount, long totalBytes, long cachedBytes, string root, FileIdentity rootIdentity)
    {
        Root = root;
        RootIdentity = rootIdentity;
        // Ordinal: paths are case-sensitive, as the file systems Peregrine is meant for are.
        _entries = entries.ToFrozenDictionary(StringComparer.Ordinal);
        _lookup = _entries.GetAlternateLookup<ReadOnlySpan<char>>();
        FileCount = fileCount;
        TotalBytes = totalBytes;
        CachedBytes = cachedBytes;
    }

    /// <summary>The root as indexed, every link resolved.</summary>
    public string Root { get; }

    /// <summary>Which folder the root was when indexed: a rename or link swap changes it.</summary>
    public FileIdentity RootIdentity { get; }

    public int FileCount { get; }

    public long TotalBytes { get; }

    public long CachedBytes { get; }

    public int Count => _entries.Count;

    public IEnumerable<CatalogEntry> Entries => _entries.Values;

    /// <summary>Looks a path up without allocating: the span is hashed and compared in place.</summary>
    public bool TryFind(ReadOnlySpan<char> path, [MaybeNullWhen(false)] out CatalogEntry entry)
        => _lookup.TryGetValue(path, out entry);
}
