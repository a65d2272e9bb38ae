using Microsoft.Extensions.Primitives;
using Peregrine.StaticWebAssets;

namespace Peregrine.Indexing;

// Routes of the static web assets manifest: an alias is a path that answers with another path's
// file (a fingerprinted route, /app.khy4lop6wu.css for /app.css), and either an alias or a file
// under its own path may carry the header fields its route states (StatedHeaders): the
// manifest's ETag per representation, while the bytes are the ones it names.

internal sealed partial class CatalogEntry
{
    /// <summary>For an alias, the file entry it answers with; null otherwise.</summary>
    private CatalogEntry? _aliasOf;

    /// <summary>What the entry's route states, when it states tags for encoded representations; null otherwise.</summary>
    private StatedHeaders? _stated;

    /// <summary>For an alias or an entry with stated tags, the variants it last saw, and its own representations of them.</summary>
    private StatedVariants? _statedVariants;

    /// <summary>The file entry an alias answers with; null for any other entry.</summary>
    public CatalogEntry? AliasOf => _aliasOf;

    /// <summary>
    /// An entry that answers with <paramref name="target"/>'s bytes, dates and variants, carrying
    /// what <paramref name="stated"/> says (the target's own Cache-Control, type and tags where
    /// it says nothing). Its representations are its own objects over the same bytes, because
    /// each representation keeps the header fields made for it (<see cref="Representation.Response"/>,
    /// the fast path's blocks), and those hold the Cache-Control and the tag. Its
    /// <see cref="RelativePath"/> is the target's: a change to that file, a writer at it, a read
    /// that finds it changed, all concern the target, and the snapshot's files (what compression
    /// and the memory budget follow) list the target once. A fingerprinted route
    /// (<paramref name="announcesDictionary"/>) sends <c>Use-As-Dictionary</c> with the pattern
    /// its target's versions are kept under, and its target's deltas.
    /// </summary>
    public static CatalogEntry ForAlias(CatalogEntry target, StatedHeaders? stated, bool announcesDictionary = false)
    {
        if (!target.IsFile || target._aliasOf is not null)
        {
            throw new ArgumentException("An alias answers with a file entry that is not itself an alias.", nameof(target));
        }

        var cacheControl = stated?.CacheControl ?? target.CacheControl.ToString();
        return new CatalogEntry(target.RelativePath)
        {
            LastWriteTicks = target.LastWriteTicks,
            LastModifiedTicks = target.LastModifiedTicks,
            _root = target._root,
            _prefixLength = target._prefixLength,
            _physicalPath = target._physicalPath,
            Identity = SentAs(Restate(target.Identity, stated?.ETag), stated),
            ContentType = stated?.ContentType ?? target.ContentType,
            LastModifiedHeader = target.LastModifiedHeader,
            CacheControl = cacheControl.Length == 0 ? StringValues.Empty : cacheControl,
            // A route that answers with an encoded file (/app.khy4lop6wu.css.br) sends it as it
            // is: its bytes are not encoded again, nor chosen among others.
            Negotiable = target.Negotiable && stated?.IsEncodedFile != true,
            VariesByEncoding = target.VariesByEncoding || stated?.VariesByEncoding == true,
            SidecarStamp = target.SidecarStamp,
            _aliasOf = target,
            _stated = stated,
            UseAsDictionary = announcesDictionary && target.Negotiable && stated?.IsEncodedFile != true && target.DictionaryMatch is { } match
                ? Indexing.DictionaryMatch.FieldValue(match)
                : StringValues.Empty,
        };
    }

    /// <summary>
    /// The variants as this entry's own representations, under the tags its route states: made
    /// again only when new variants are published (compression's fast pass, then its final
    /// pass), so a request after the first allocates nothing. Two requests racing may both make
    /// them; one is kept.
    /// </summary>
    private EncodedVariants? StatedEncoded()
    {
        var source = _aliasOf is { } target ? target.Encoded : Volatile.Read(ref _encoded);
        if (source is null)
        {
            return null;
        }

        var seen = Volatile.Read(ref _statedVariants);
        if (seen is not null && ReferenceEquals(seen.Source, source))
        {
            return seen.Own;
        }

        var own = source.Available == ContentCodingSet.None
            ? source
            : new EncodedVariants(RestateOrNull(source.Brotli, _stated?.EncodedETag("br")), RestateOrNull(source.Zstd, _stated?.EncodedETag("zstd")), RestateOrNull(source.Gzip, _stated?.EncodedETag("gzip")), source.Stated);
        Volatile.Write(ref _statedVariants, new StatedVariants(source, own));
        return own;
    }

    private static Representation? RestateOrNull(Representation? representation, string? stated)
        => representation is null ? null : Restate(representation, stated);

    /// <summary>
    /// A copy of <paramref name="representation"/> sent with the <paramref name="stated"/> tag
    /// when that tag names these bytes; with Peregrine's own tag when the route states another
    /// (the file changed since the build: a strong tag must change with the bytes, RFC 9110
    /// §8.8.3); with the tag it had when the route states none.
    /// </summary>
    private static Representation Restate(Representation representation, string? stated)
        => representation.WithTag(stated is null
            ? representation.ETag.ToString()
            : EntityTag.SameContent(representation.ContentTag, stated) ? stated : representation.ContentTag);

    private sealed record StatedVariants(EncodedVariants Source, EncodedVariants Own);
}
