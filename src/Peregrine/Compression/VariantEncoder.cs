using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Sources;

namespace Peregrine.Compression;

/// <summary>
/// Makes the encoded variants of one file, the encoding half of compression (the scheduling
/// half is <see cref="Compressor"/>). Per coding, first found wins:
/// <list type="number">
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
/// either it is dropped. Reading and checking an encoded file is in <c>VariantEncoder.Verify.cs</c>.
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
        if (entry.Identity.Length <= MinimumSavedBytes)
        {
            return current ?? EncodedVariants.None;
        }

        var work = new EntryWork(entry);

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

    private Representation? FromSidecar(EntryWork work, ContentCoding coding)
    {
        var path = work.Entry.PhysicalPath + Encoders.SidecarExtension(coding);
        var sidecar = FileSystemProbe.Probe(path);
        switch (sidecar.Kind)
        {
            case FileKind.Missing:
                return null;
            case FileKind.Regular:
                break;
            default:
                // Opening a FIFO would block this worker for good.
                WarnOnce(path, "is not a regular file");
                return null;
        }

        // Against the source's time as indexed: a source changed since is indexed again anyway.
        if (sidecar.LastWriteTicks < work.Entry.LastWriteTicks)
        {
            // Refused without being read: the usual sign of a build step that changed the file
            // and not its sidecar, which the operator should hear about.
            if (_warnedSidecars.TryAdd(path, 0))
            {
                CompressionLog.SidecarStale(_logger, path);
            }

            return null;
        }

        if (!IsWorthKeeping(work.Entry.Identity.Length, sidecar.Length))
        {
            return null;
        }

        var variant = LoadVerified(work, coding, path, sidecar.Length, out var reason);
        if (variant is null)
        {
            WarnOnce(path, reason!);
            return null;
        }

        Interlocked.Increment(ref _sidecarsUsed);
        return variant;
    }

    /// <summary>
    /// The final-quality variant from the cache, or a new one made at the settings of
    /// <paramref name="pass"/>; <paramref name="fast"/> is set when it was made at the fast
    /// settings (or was worth making and had no room), so that the final pass makes it again.
    /// </summary>
    private Representation? FromCacheOrEncoder(EntryWork work, ContentCoding coding, CompressionPass pass, out bool fast)
    {
        fast = false;
        if (_cache is null)
        {
            return FromEncoder(work, coding, cachePath: null, pass, out fast);
        }

        var cachePath = _cache.PathFor(work.IdentityTag, coding);
        var info = new FileInfo(cachePath);
        if (info.Exists)
        {
            if (info.Length == 0)
            {
                // Recorded earlier: this coding does not save enough on these bytes.
                Interlocked.Increment(ref _cacheHits);
                return null;
            }

            string? reason = "is not smaller than the file";
            var cached = IsWorthKeeping(work.Entry.Identity.Length, info.Length)
                ? LoadVerified(work, coding, cachePath, info.Length, out reason)
                : null;
            if (cached is not null)
            {
                Interlocked.Increment(ref _cacheHits);
                return cached;
            }

            CompressionLog.CacheFileInvalid(_logger, work.Entry.PhysicalPath, reason!);
            CompressionCache.TryDelete(cachePath);
        }

        return FromEncoder(work, coding, cachePath, pass, out fast);
    }

    private Representation? FromEncoder(EntryWork work, ContentCoding coding, string? cachePath, CompressionPass pass, out bool fast)
    {
        fast = false;
        var source = LoadSource(work);
        if (source is null)
        {
            return null;
        }

        var encoded = Encoders.Encode(coding, source, pass);
        Interlocked.Increment(ref pass == CompressionPass.Final ? ref _compressions : ref _fastCompressions);
        if (!IsWorthKeeping(source.Length, encoded.Length))
        {
            // A coding that does not save enough at the fast settings is not tried at the final
            // ones either: text that Brotli 5 cannot shrink by 5% is as good as incompressible.
            // The empty cache file records that for the next start.
            if (cachePath is not null)
            {
                TryWriteCache(cachePath, []);
            }

            return null;
        }

        var etag = EntityTag.Compute(encoded);
        if (pass == CompressionPass.Fast)
        {
            // Held in memory only, never cached: the final pass replaces it within minutes. Without
            // room it is dropped, and the file waits for its final variant in identity.
            fast = true;
            return _budget.TryReserve(encoded.Length) ? new Representation(coding, encoded.Length, etag, encoded, physicalPath: null) : null;
        }

        var onDisk = cachePath is not null && TryWriteCache(cachePath, encoded);
        if ((work.Entry.Identity.Content is not null || !onDisk) && _budget.TryReserve(encoded.Length))
        {
            return new Representation(coding, encoded.Length, etag, encoded, physicalPath: null);
        }

        if (onDisk)
        {
            return new Representation(coding, encoded.Length, etag, content: null, cachePath);
        }

        CompressionLog.VariantDropped(_logger, Encoders.Token(coding), work.Entry.PhysicalPath);
        return null;
    }

    /// <summary>
    /// The file's bytes, from memory or read whole from disk; <see langword="null"/> when the
    /// file is over <see cref="CompressionOptions.MaxFileSize"/> or no longer holds the indexed
    /// bytes (then <see cref="EntryWork.SourceChanged"/> is set).
    /// </summary>
    private byte[]? LoadSource(EntryWork work)
    {
        if (work.SourceLoaded)
        {
            return work.Source;
        }

        work.SourceLoaded = true;
        var identity = work.Entry.Identity;
        if (identity.Length > _options.MaxFileSize)
        {
            CompressionLog.SourceTooLarge(_logger, work.Entry.PhysicalPath, identity.Length);
            return null;
        }

        if (identity.Content is not null)
        {
            return work.Source = identity.Content;
        }

        using var stream = new FileStream(work.Entry.PhysicalPath, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1, FileOptions.SequentialScan);
        var bytes = stream.Length == identity.Length ? GC.AllocateUninitializedArray<byte>((int)identity.Length) : null;
        if (bytes is not null)
        {
            try
            {
                stream.ReadExactly(bytes);
            }
            catch (EndOfStreamException)
            {
                // Truncated while being read.
                bytes = null;
            }
        }

        // Compressing bytes other than those the ETag was made from would serve the wrong file
        // under a right-looking tag.
        if (bytes is null || EntityTag.Compute(bytes) != work.IdentityTag)
        {
            CompressionLog.SourceChanged(_logger, work.Entry.PhysicalPath);
            work.SourceChanged = true;
            return null;
        }

        return work.Source = bytes;
    }

    private bool TryWriteCache(string path, ReadOnlySpan<byte> bytes)
    {
        if (_cache!.TryWrite(path, bytes, out var reason))
        {
            return true;
        }

        // A full or read-only disk fails every write the same way: one warning says it.
        if (Interlocked.Exchange(ref _cacheWriteWarned, 1) == 0)
        {
            CompressionLog.CacheWriteFailed(_logger, path, reason!);
        }

        return false;
    }

    private void WarnOnce(string path, string reason)
    {
        if (_warnedSidecars.TryAdd(path, 0))
        {
            CompressionLog.SidecarInvalid(_logger, path, reason);
        }
    }

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
            IdentityTag = entry.Identity.ETag.ToString();
        }

        public CatalogEntry Entry { get; }

        /// <summary>The identity ETag, quotes included.</summary>
        public string IdentityTag { get; }

        public bool SourceLoaded { get; set; }

        public byte[]? Source { get; set; }

        /// <summary>Set when the file on disk no longer holds the bytes this entry was indexed with.</summary>
        public bool SourceChanged { get; set; }
    }
}
