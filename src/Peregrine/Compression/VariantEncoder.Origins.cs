using Peregrine.Indexing;
using Peregrine.Sources;

namespace Peregrine.Compression;

/// <summary>
/// Where one variant comes from, first found wins: a sidecar beside the file, a cache file from
/// an earlier run, or the encoder (whose final-pass output the cache then keeps).
/// </summary>
internal sealed partial class VariantEncoder
{
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
}
