using System.Diagnostics.CodeAnalysis;

namespace Peregrine.Catalog;

/// <summary>
/// An immutable index from request path (relative to the mount point, leading slash, decoded)
/// to entry. A request reads one snapshot reference and sees one consistent site.
/// </summary>
internal sealed class CatalogSnapshot
{
    private readonly PathIndex _index;

    public CatalogSnapshot(Dictionary<string, CatalogEntry> entries, int fileCount, long cachedBytes, string root, FileIdentity rootIdentity)
    {
        Root = root;
        RootIdentity = rootIdentity;
        // Ordinal: paths are case-sensitive, as the file systems Peregrine is meant for are.
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

    /// <summary>Looks a path up without allocating: the span is hashed and compared in place.</summary>
    public bool TryFind(ReadOnlySpan<char> path, [MaybeNullWhen(false)] out CatalogEntry entry)
        => _index.TryFind(path, out entry);
}
