using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>The first-pass workers: which codings they make, how an entry is taken, compressed and published, and what a dropped entry gives back.</summary>
internal sealed partial class Compressor
{
    private static ContentCoding[] ResolveCodings(CompressionOptions options, ILogger logger)
    {
        var codings = new List<ContentCoding>(3);
        foreach (var token in options.Encodings ?? [])
        {
            // Unknown tokens and duplicates are reported by CompressionOptionsValidator.
            if (!Encoders.TryParse(token, out var coding) || codings.Contains(coding))
            {
                continue;
            }

            if (coding == ContentCoding.Zstd && !Zstd.IsAvailable)
            {
                if (options.Enabled)
                {
                    CompressionLog.ZstdUnavailable(logger, Zstd.UnavailableReason!);
                }

                continue;
            }

            codings.Add(coding);
        }

        return [.. codings];
    }

    private void Work()
    {
        var stopping = _stopping.Token;
        var reader = _queue.Reader;
        try
        {
            while (true)
            {
                while (TryTake(reader, out var entry))
                {
                    var variants = Process(entry, stopping, out var upgrade);
                    Complete(entry, variants, upgrade);
                }

                // Blocking is what this thread is for; false means the queue was completed.
                if (!reader.WaitToReadAsync(stopping).AsTask().GetAwaiter().GetResult())
                {
                    return;
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Disposed: the rest of the queue is dropped.
        }
    }

    /// <summary>The next entry for the first pass: one a request asked for if any, else the next queued.</summary>
    private bool TryTake(ChannelReader<CatalogEntry> reader, out CatalogEntry entry)
    {
        while (_requested.TryDequeue(out entry!) || reader.TryRead(out entry!))
        {
            lock (_gate)
            {
                if (_queued.Remove(entry))
                {
                    return true;
                }
            }
        }

        return false;
    }

    private EncodedVariants Process(CatalogEntry entry, CancellationToken stopping, out ContentCodingSet upgrade)
    {
        upgrade = ContentCodingSet.None;
        try
        {
            return _encoder.Encode(entry, stopping, out upgrade);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // The file vanished or became unreadable since the index; the watcher will bring a
            // new entry if it comes back. Until then it is served (or not) as indexed.
            CompressionLog.SourceUnreadable(_logger, entry.PhysicalPath, ex.Message);
            return EncodedVariants.None;
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // A bug in one file's compression must not stop the rest, nor leave WhenIdle waiting.
            CompressionLog.Failed(_logger, entry.PhysicalPath, ex);
            return EncodedVariants.None;
        }
    }

    private void Complete(CatalogEntry entry, EncodedVariants variants, ContentCodingSet upgrade)
    {
        _progress.Record(entry, variants);
        bool published, idle;
        lock (_gate)
        {
            published = !_retired.Remove(entry);
            if (!published)
            {
                _inFlight.Remove(entry);
                _encoder.Release(variants);
                upgrade = ContentCodingSet.None;
            }
            else
            {
                entry.PublishEncoded(variants);
                if (upgrade != ContentCodingSet.None && !_disposed)
                {
                    // Still in flight: a retirement from now on is settled by the final pass.
                    _upgrading++;
                    _upgradeNodes.Add(entry, _upgrades.AddLast(new PendingUpgrade(entry, variants, upgrade)));
                    _upgradeSignal.Release();
                }
                else
                {
                    _inFlight.Remove(entry);
                }
            }

            if (upgrade == ContentCodingSet.None)
            {
                // Counted before WhenIdle can complete, so that a reader woken by it sees it.
                _progress.RecordFinal();
            }

            if (!_disposed && --_pending == 0)
            {
                _firstPass.TrySetResult();
                _firstPassIdle.Set();
            }

            idle = SettleLocked();
        }

        if (published)
        {
            VariantsPublished?.Invoke(entry, variants, upgrade == ContentCodingSet.None);
        }

        if (idle)
        {
            // The encoders' native state is no use until the next change; give it back once
            // the compressor stays idle (Compressor.Trim.cs).
            TrimWhenQuiet();
        }
    }

    /// <summary>Completes <see cref="WhenIdle"/> when neither pass has work left; true when it did.</summary>
    private bool SettleLocked()
    {
        if (_disposed || _pending != 0 || _upgrading != 0 || _idle.Task.IsCompleted)
        {
            return false;
        }

        _idle.TrySetResult();
        return true;
    }

    /// <summary>
    /// Gives back the memory the variants of a dropped entry hold. An entry still queued or
    /// being compressed is not published when its work ends, and its memory is given back then.
    /// </summary>
    private void Retire(CatalogEntry entry)
    {
        bool idle;
        lock (_gate)
        {
            if (_upgradeNodes.Remove(entry, out var waiting))
            {
                // Waiting for the final pass: out of its queue now, rather than when a final-pass
                // thread reaches it, which under steady changes may be never.
                _upgrades.Remove(waiting);
                _inFlight.Remove(entry);
                _encoder.Release(waiting.Value.Current);
                if (!_disposed)
                {
                    _upgrading--;
                }

                _progress.RecordFinal();
                idle = SettleLocked();
            }
            else if (_inFlight.Contains(entry))
            {
                _retired.Add(entry);
                return;
            }
            else
            {
                // Not in flight: the variants are final (they are published under the lock).
                if (entry.Encoded is { } variants)
                {
                    _encoder.Release(variants);
                }

                return;
            }
        }

        if (idle)
        {
            TrimWhenQuiet();
        }
    }
}
