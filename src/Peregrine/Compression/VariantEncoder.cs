using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>
/// Makes the encoded variants of one file, the encoding half of compression (the scheduling
/// half is <see cref="Compressor"/>). Per coding, first found wins:
/// <list type="number">
/// <item>for a file a static web assets manifest states encodings for, exactly those files,
/// while they decode to its bytes (<c>VariantEncoder.Stated.cs</c>); otherwise:</item>
/// <item>a sidecar beside the file (<c>app.js.br</c>, <c>.zst</c>, <c>.gz</c>) that is not older
/// than the file and decodes to exactly its bytes: the operator's own compression is served as is;</item>
/// <item>a cache file from an earlier run (see <see cref="CompressionCache"/>);</item>
/// <item>the encoder: first at fast settings (<see cref="Encode"/>), so that every file has a
/// variant soon after start, then again at the highest level each coding offers for the web
/// (<see cref="Upgrade"/>), which is what the cache keeps.</item>
/// </list>
/// Whatever its origin, a variant is kept only when it saves enough (<see cref="IsWorthKeeping"/>).
/// It is held in memory when the file itself is (the catalog's size limit and memory budget
/// already chose which files are worth memory) and the budget has room, or when there is no
/// file to read it from; otherwise it is read from its sidecar or cache file, and without
/// either it is dropped. Where each variant comes from (sidecar, cache, encoder) is in
/// <c>VariantEncoder.Origins.cs</c>; reading and checking an encoded file in <c>VariantEncoder.Verify.cs</c>.
/// </summary>
internal sealed partial class VariantEncoder
{
    /// <summary>
    /// The fewest bytes a variant must save. Every variant costs something however small it
    /// is: a <c>Content-Encoding</c> field (22 bytes on HTTP/1.1), the client's decoding, a
    /// second copy in memory, and one more entry in every shared cache keyed on
    /// Accept-Encoding (RFC 9110 §12.5.5). 64 bytes is about 4% of a typical 1460-byte TCP
    /// segment: a smaller saving changes a response's packet count only when it happens to
    /// straddle a segment boundary, and then by one.
    /// </summary>
    internal const long MinimumSavedBytes = 64;

    /// <summary>
    /// The smallest share of the file a variant must save, in percent. Below 5% the file is
    /// as good as incompressible (already-minified binary data, embedded images): the transfer
    /// barely shrinks while the client still pays for decoding and the budget for the copy.
    /// </summary>
    internal const int MinimumSavedPercent = 5;

    private readonly CompressionOptions _options;
    private readonly MemoryBudget _budget;
    private readonly ILogger _logger;
    private readonly CompressionCache? _cache;
    private readonly ConcurrentDictionary<string, byte> _warnedSidecars = new(StringComparer.Ordinal);
    private int _cacheWriteWarned;
    private long _compressions;
    private long _fastCompressions;
    private long _cacheHits;
    private long _sidecarsUsed;

    public VariantEncoder(CompressionOptions options, IReadOnlyList<ContentCoding> codings, MemoryBudget budget, ILogger logger)
    {
        _options = options;
        Codings = codings;
        _budget = budget;
        _logger = logger;
        if (options.Enabled && codings.Count > 0 && !string.IsNullOrWhiteSpace(options.CacheDirectory))
        {
            _cache = CompressionCache.TryOpen(options.CacheDirectory, out var reason);
            if (_cache is null)
            {
                CompressionLog.CacheUnavailable(logger, options.CacheDirectory, reason!);
            }
        }
    }

    /// <summary>The codings made, in the configured order.</summary>
    public IReadOnlyList<ContentCoding> Codings { get; }

    /// <summary>Times an encoder ran at final quality (a sidecar or cache file used instead is not counted).</summary>
    public long Compressions => Interlocked.Read(ref _compressions);

    /// <summary>Times an encoder ran at the fast settings of the first pass.</summary>
    public long FastCompressions => Interlocked.Read(ref _fastCompressions);

    /// <summary>Variants (or records that a coding was not worth keeping) read back from the cache folder.</summary>
    public long CacheHits => Interlocked.Read(ref _cacheHits);

    /// <summary>Variants served from a sidecar beside the file.</summary>
    public long SidecarsUsed => Interlocked.Read(ref _sidecarsUsed);

    /// <summary>True when an encoding of <paramref name="encodedLength"/> bytes is worth serving instead of <paramref name="identityLength"/>.</summary>
    internal static bool IsWorthKeeping(long identityLength, long encodedLength)
    {
        var saved = identityLength - encodedLength;
        return saved >= MinimumSavedBytes && saved * 100 >= identityLength * MinimumSavedPercent;
    }

    /// <summary>
    /// The first variants of <paramref name="entry"/>, their memory reserved from the budget;
    /// the caller releases it (<see cref="Release(EncodedVariants)"/>) when they are not
    /// published or no longer in force. A coding found in a sidecar or the cache is final as
    /// it is; the others are made at the fast settings and named in <paramref name="upgrade"/>,
    /// for <see cref="Upgrade"/> to replace.
    /// </summary>
    public EncodedVariants Encode(CatalogEntry entry, CancellationToken stopping, out ContentCodingSet upgrade)
        => Make(entry, current: null, ContentCodingSet.None, stopping, out upgrade);

    /// <summary>
    /// <paramref name="current"/> with the codings named in <paramref name="upgrade"/> made
    /// again at final quality; the others are kept as they are. The caller releases the
    /// replaced variants (<see cref="ReleaseReplaced"/>) once the result is published. When
    /// the file no longer holds the indexed bytes, <paramref name="current"/> is returned.
    /// </summary>
    public EncodedVariants Upgrade(CatalogEntry entry, EncodedVariants current, ContentCodingSet upgrade, CancellationToken stopping)
        => Make(entry, current, upgrade, stopping, out _);

    /// <summary>Gives back the memory of the variants of <paramref name="replaced"/> that <paramref name="published"/> no longer holds.</summary>
    public void ReleaseReplaced(EncodedVariants replaced, EncodedVariants published)
    {
        foreach (var coding in Codings)
        {
            if (replaced.Get(coding) is { } old && !ReferenceEquals(old, published.Get(coding)))
            {
                Release(old);
            }
        }
    }

    /// <summary>The flag of one coding in a <see cref="ContentCodingSet"/>.</summary>
    internal static ContentCodingSet Flag(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => ContentCodingSet.Brotli,
        ContentCoding.Zstd => ContentCodingSet.Zstd,
        ContentCoding.Gzip => ContentCodingSet.Gzip,
        _ => ContentCodingSet.None,
    };

    private EncodedVariants Make(CatalogEntry entry, EncodedVariants? current, ContentCodingSet redo, CancellationToken stopping, out ContentCodingSet upgrade)
    {
        upgrade = ContentCodingSet.None;
        var work = new EntryWork(entry);
        if (current is null && entry.StatedEncodings is { Count: > 0 } stated && _options.ManifestEncodings == ManifestEncodingPolicy.AsStated
            && FromManifest(work, stated) is { } fromManifest)
        {
            return fromManifest;
        }

        if (entry.Identity.Length <= MinimumSavedBytes)
        {
            return current ?? EncodedVariants.None;
        }

        // Indexed by ContentCoding; only the variants made here, not those kept from current.
        var made = new Representation?[4];
        try
        {
            foreach (var coding in Codings)
            {
                stopping.ThrowIfCancellationRequested();
                if (current is not null && (redo & Flag(coding)) == 0)
                {
                    continue;
                }

                var fast = false;
                made[(int)coding] = current is not null
                    ? FromCacheOrEncoder(work, coding, CompressionPass.Final, out fast)
                    : FromSidecar(work, coding) ?? FromCacheOrEncoder(work, coding, CompressionPass.Fast, out fast);
                if (fast)
                {
                    upgrade |= Flag(coding);
                }

                if (work.SourceChanged)
                {
                    // The catalog indexes the new bytes as a new entry and queues it; this one
                    // is on its way out and keeps serving what it has until then.
                    Release(made);
                    upgrade = ContentCodingSet.None;
                    return current ?? EncodedVariants.None;
                }
            }
        }
        catch
        {
            Release(made);
            throw;
        }

        // A final variant that could not be held (no room in the budget, no cache file to serve
        // it from) leaves the fast one in place rather than none.
        Representation? Pick(ContentCoding coding)
            => current is not null && ((redo & Flag(coding)) == 0 || made[(int)coding] is null) ? current.Get(coding) : made[(int)coding];

        var (brotli, zstd, gzip) = (Pick(ContentCoding.Brotli), Pick(ContentCoding.Zstd), Pick(ContentCoding.Gzip));
        return brotli is null && zstd is null && gzip is null ? EncodedVariants.None : new EncodedVariants(brotli, zstd, gzip);
    }

    /// <summary>Gives back the memory the variants hold; those read from a file hold none.</summary>
    public void Release(EncodedVariants variants) => Release(variants.Brotli, variants.Zstd, variants.Gzip);

    private void Release(params ReadOnlySpan<Representation?> variants)
    {
        foreach (var variant in variants)
        {
            if (variant?.Content is { } content)
            {
                _budget.Release(content.Length);
            }
        }
    }

    /// <summary>What is known about one entry while its variants are chosen.</summary>
    private sealed class EntryWork
    {
        public EntryWork(CatalogEntry entry)
        {
            Entry = entry;
            IdentityTag = entry.Identity.ContentTag;
        }

        public CatalogEntry Entry { get; }

        /// <summary>The identity's own content tag (<see cref="Representation.ContentTag"/>), quotes included: not the manifest's, which names no cache file.</summary>
        public string IdentityTag { get; }

        public bool SourceLoaded { get; set; }

        public byte[]? Source { get; set; }

        /// <summary>Set when the file on disk no longer holds the bytes this entry was indexed with.</summary>
        public bool SourceChanged { get; set; }
    }
}
