using Microsoft.Extensions.Primitives;

namespace Peregrine.Indexing;

// Aliases: a path that answers with another path's file (a fingerprinted route of the static
// web assets manifest, /app.khy4lop6wu.css for /app.css), under header values of its own.

internal sealed partial class CatalogEntry
{
    /// <summary>For an alias, the file entry it answers with; null otherwise.</summary>
    private CatalogEntry? _aliasOf;

    /// <summary>For an alias, the target's variants it last saw, and its own representations of them.</summary>
    private AliasVariants? _aliasVariants;

    /// <summary>The file entry an alias answers with; null for any other entry.</summary>
    public CatalogEntry? AliasOf => _aliasOf;

    /// <summary>
    /// An entry that answers with <paramref name="target"/>'s bytes, tags, dates and variants,
    /// carrying <paramref name="cacheControl"/>. Its representations are its own objects over the
    /// same bytes, because each representation keeps the header fields made for it
    /// (<see cref="Representation.Response"/>, the fast path's blocks), and those hold the
    /// Cache-Control. Its <see cref="RelativePath"/> is the target's: a change to that file, a
    /// writer at it, a read that finds it changed, all concern the target, and the snapshot's
    /// files (what compression and the memory budget follow) list the target once.
    /// </summary>
    public static CatalogEntry ForAlias(CatalogEntry target, string cacheControl)
    {
        if (!target.IsFile || target._aliasOf is not null)
        {
            throw new ArgumentException("An alias answers with a file entry that is not itself an alias.", nameof(target));
        }

        return new CatalogEntry(target.RelativePath)
        {
            LastWriteTicks = target.LastWriteTicks,
            _root = target._root,
            _prefixLength = target._prefixLength,
            _physicalPath = target._physicalPath,
            Identity = Copy(target.Identity),
            ContentType = target.ContentType,
            LastModifiedHeader = target.LastModifiedHeader,
            CacheControl = cacheControl.Length == 0 ? StringValues.Empty : cacheControl,
            Negotiable = target.Negotiable,
            SidecarStamp = target.SidecarStamp,
            _aliasOf = target,
        };
    }

    /// <summary>
    /// The target's variants as this alias's own representations: made again only when the
    /// target publishes new ones (compression's fast pass, then its final pass), so a request
    /// after the first allocates nothing. Two requests racing may both make them; one is kept.
    /// </summary>
    private EncodedVariants? AliasEncoded()
    {
        var source = _aliasOf!.Encoded;
        if (source is null)
        {
            return null;
        }

        var seen = Volatile.Read(ref _aliasVariants);
        if (seen is not null && ReferenceEquals(seen.Source, source))
        {
            return seen.Own;
        }

        var own = source.Available == ContentCodingSet.None
            ? source
            : new EncodedVariants(CopyOrNull(source.Brotli), CopyOrNull(source.Zstd), CopyOrNull(source.Gzip));
        Volatile.Write(ref _aliasVariants, new AliasVariants(source, own));
        return own;
    }

    private static Representation? CopyOrNull(Representation? representation) => representation is null ? null : Copy(representation);

    private static Representation Copy(Representation representation)
        => new(representation.Coding, representation.Length, representation.ETag.ToString(), representation.Content, representation.PhysicalPath);

    private sealed record AliasVariants(EncodedVariants Source, EncodedVariants Own);
}
