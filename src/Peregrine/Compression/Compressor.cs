using System.Collections.Concurrent;
using System.Diagnostics;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Peregrine.Catalog;
using Peregrine.Select;

namespace Peregrine.Compression;

/// <summary>
/// Makes the encoded variants of negotiable files in the background, after the index is in
/// force: requests are served unencoded until an entry's variants are published, then encoded.
/// This file holds the queue, the workers and the progress report; the choice of each variant
/// (sidecar, cache, or compress) is in <c>Compressor.Variants.cs</c>.
/// </summary>
internal sealed partial class Compressor : IDisposable
{
    private static readonly TimeSpan ProgressInterval = TimeSpan.FromSeconds(2);

    private readonly CompressionOptions _options;
    private readonly MemoryBudget _budget;
    private readonly ILogger _logger;
    private readonly ContentCoding[] _codings;
    private readonly CompressionCache? _cache;
    private readonly Channel<CatalogEntry> _queue;

    // Not disposed: workers and the progress report may still read its token after Dispose,
    // and a source without a timer holds nothing that needs freeing.
    private readonly CancellationTokenSource _stopping = new();
    private readonly ConcurrentDictionary<string, byte> _warnedSidecars = new(StringComparer.Ordinal);

    // Entries queued or being compressed, and those among them the catalog has dropped since:
    // by reference, since two snapshots may hold different entries for one path.
    private readonly HashSet<CatalogEntry> _inFlight = new(ReferenceEqualityComparer.Instance);
    private readonly HashSet<CatalogEntry> _retired = new(ReferenceEqualityComparer.Instance);

    private readonly Lock _gate = new();
    private int _pending;
    private bool _disposed;
    private TaskCompletionSource _idle = NewIdleSource(completed: true);

    private long _filesProcessed;
    private long _filesCompressed;
    private long _bytesIn;
    private long _bytesOut;
    private long _compressions;
    private long _cacheHits;
    private long _sidecarsUsed;

    public Compressor(CompressionOptions options, MemoryBudget budget, ILogger logger)
    {
        _options = options;
        _budget = budget;
        _logger = logger;
        _codings = ResolveCodings(options, logger);
        if (options.Enabled && _codings.Length > 0 && !string.IsNullOrWhiteSpace(options.CacheDirectory))
        {
            _cache = CompressionCache.TryOpen(options.CacheDirectory, out var reason);
            if (_cache is null)
            {
                CompressionLog.CacheUnavailable(logger, options.CacheDirectory, reason!);
            }
        }

        Workers = !options.Enabled || _codings.Length == 0 ? 0
            : options.MaxParallelism > 0 ? options.MaxParallelism
            : Math.Max(1, Environment.ProcessorCount - 1);
        _queue = Channel.CreateUnbounded<CatalogEntry>(new UnboundedChannelOptions { SingleReader = Workers == 1 });
        for (var i = 0; i < Workers; i++)
        {
            // Dedicated threads rather than the thread pool: Brotli at quality 11 holds a thread
            // for over a second per megabyte (4 MB of mixed text took 6 s on one core of the
            // development machine), and a pool thread held that long is one Kestrel cannot use
            // for requests until the pool notices and grows.
            new Thread(Work) { IsBackground = true, Name = "Peregrine compression" }.Start();
        }
    }

    /// <summary>How many files are compressed at once; 0 when there is nothing to produce (compression off, or no usable coding).</summary>
    public int Workers { get; }

    /// <summary>The codings produced, in the configured order, less any that cannot be (zstd without libzstd).</summary>
    public IReadOnlyList<ContentCoding> Codings => _codings;

    /// <summary>Entries queued or being worked on.</summary>
    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Entries whose variants have been published, with or without any variant.</summary>
    public long FilesProcessed => Interlocked.Read(ref _filesProcessed);

    /// <summary>Entries published with at least one variant.</summary>
    public long FilesCompressed => Interlocked.Read(ref _filesCompressed);

    /// <summary>The identity bytes of the entries counted by <see cref="FilesCompressed"/>.</summary>
    public long BytesIn => Interlocked.Read(ref _bytesIn);

    /// <summary>The smallest variant of each entry counted by <see cref="FilesCompressed"/>: what a client accepting every coding receives.</summary>
    public long BytesOut => Interlocked.Read(ref _bytesOut);

    /// <summary><see cref="BytesIn"/> less <see cref="BytesOut"/>.</summary>
    public long BytesSaved => BytesIn - BytesOut;

    /// <summary>Times an encoder ran (a sidecar or cache file used instead is not counted).</summary>
    public long Compressions => Interlocked.Read(ref _compressions);

    /// <summary>Variants (or records that a coding was not worth keeping) read back from the cache folder.</summary>
    public long CacheHits => Interlocked.Read(ref _cacheHits);

    /// <summary>Variants served from a sidecar beside the file.</summary>
    public long SidecarsUsed => Interlocked.Read(ref _sidecarsUsed);

    /// <summary>
    /// Queues one entry and returns at once. Entries that are not negotiable, or when
    /// compression is off, are published with no variants straight away. An entry already
    /// queued, or whose variants are already published, is left alone: a changed file comes
    /// back as a new entry.
    /// </summary>
    public void Enqueue(CatalogEntry entry) => Enqueue([entry]);

    /// <summary>
    /// Queues entries and returns at once, as <see cref="Enqueue(CatalogEntry)"/> does; the
    /// first index should use this, so that the start of the work is logged once with the
    /// number of files.
    /// </summary>
    public void Enqueue(IEnumerable<CatalogEntry> entries)
    {
        var work = new List<CatalogEntry>();
        Task? batch = null;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            foreach (var entry in entries)
            {
                if (entry.Encoded is not null || _inFlight.Contains(entry))
                {
                    continue;
                }

                if (entry.Negotiable && _options.Enabled && _codings.Length > 0)
                {
                    _inFlight.Add(entry);
                    work.Add(entry);
                }
                else
                {
                    entry.PublishEncoded(EncodedVariants.None);
                }
            }

            if (work.Count == 0)
            {
                return;
            }

            if (_pending == 0)
            {
                _idle = NewIdleSource(completed: false);
                batch = _idle.Task;
            }

            _pending += work.Count;
        }

        if (batch is not null)
        {
            CompressionLog.Started(_logger, work.Count);
            _ = ReportAsync(batch, FilesProcessed, FilesCompressed, BytesIn, BytesOut);
        }

        foreach (var entry in work)
        {
            // Unbounded: TryWrite fails only once the writer is completed, by Dispose.
            _queue.Writer.TryWrite(entry);
        }
    }

    /// <summary>
    /// Gives back the memory its variants hold when the catalog drops an entry (a file that
    /// changed or went away). Call it once per dropped file entry. An entry still queued or
    /// being compressed is not published when its work ends, and its memory is given back then.
    /// The compressor alone reserves and releases variant memory; the catalog releases only
    /// the identity bytes.
    /// </summary>
    public void Retire(CatalogEntry entry)
    {
        lock (_gate)
        {
            if (_inFlight.Contains(entry))
            {
                _retired.Add(entry);
                return;
            }
        }

        // Not in flight: the variants are final (they are published under the lock).
        if (entry.Encoded is { } variants)
        {
            Release(variants.Brotli, variants.Zstd, variants.Gzip);
        }
    }

    /// <summary>Completes when nothing is queued or in flight (at once if that is already so), or on dispose.</summary>
    public Task WhenIdle()
    {
        lock (_gate)
        {
            return _idle.Task;
        }
    }

    /// <summary>
    /// Stops the workers: a file being compressed stops after its current coding and is not
    /// published, the rest of the queue is dropped, and <see cref="WhenIdle"/> completes.
    /// </summary>
    public void Dispose()
    {
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _disposed = true;
            _pending = 0;
            _idle.TrySetResult();
        }

        _queue.Writer.TryComplete();
        _stopping.Cancel();
    }

    private static TaskCompletionSource NewIdleSource(bool completed)
    {
        var source = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        if (completed)
        {
            source.SetResult();
        }

        return source;
    }

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
                while (reader.TryRead(out var entry))
                {
                    Complete(entry, Process(entry, stopping));
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

    private EncodedVariants Process(CatalogEntry entry, CancellationToken stopping)
    {
        try
        {
            return EncodeEntry(entry, stopping);
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

    private void Complete(CatalogEntry entry, EncodedVariants variants)
    {
        var smallest = Math.Min(variants.Brotli?.Length ?? long.MaxValue, Math.Min(variants.Zstd?.Length ?? long.MaxValue, variants.Gzip?.Length ?? long.MaxValue));
        if (smallest != long.MaxValue)
        {
            Interlocked.Increment(ref _filesCompressed);
            Interlocked.Add(ref _bytesIn, entry.Identity.Length);
            Interlocked.Add(ref _bytesOut, smallest);
        }

        Interlocked.Increment(ref _filesProcessed);
        lock (_gate)
        {
            _inFlight.Remove(entry);
            if (_retired.Remove(entry))
            {
                Release(variants.Brotli, variants.Zstd, variants.Gzip);
            }
            else
            {
                entry.PublishEncoded(variants);
            }

            if (!_disposed && --_pending == 0)
            {
                _idle.TrySetResult();
            }
        }
    }

    private async Task ReportAsync(Task idle, long processed, long compressed, long bytesIn, long bytesOut)
    {
        var stopwatch = Stopwatch.StartNew();
        var stopping = _stopping.Token;
        while (true)
        {
            await Task.WhenAny(idle, Task.Delay(ProgressInterval, stopping)).ConfigureAwait(false);
            if (stopping.IsCancellationRequested)
            {
                return;
            }

            if (idle.IsCompleted)
            {
                CompressionLog.Finished(
                    _logger,
                    FilesCompressed - compressed,
                    FilesProcessed - processed,
                    BytesIn - bytesIn,
                    BytesOut - bytesOut,
                    stopwatch.ElapsedMilliseconds);
                return;
            }

            // Files queued while the work runs join it, so the total can grow between reports.
            var done = FilesProcessed - processed;
            CompressionLog.Progress(_logger, done, done + Pending, stopwatch.ElapsedMilliseconds);
        }
    }
}
