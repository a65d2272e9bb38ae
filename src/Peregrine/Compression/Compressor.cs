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

        Workers = options.MaxParallelism > 0 ? options.MaxParallelism : Math.Max(1, Environment.ProcessorCount - 1);
        _queue = Channel.CreateUnbounded<CatalogEntry>(new UnboundedChannelOptions { SingleReader = Workers == 1 });
        for (var i = 0; i < Workers; i++)
        {
            _ = Task.Run(WorkAsync);
        }
    }

    /// <summary>How many files are compressed at once.</summary>
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
    /// compression is off, are published with no variants straight away.
    /// </summary>
    public void Enqueue(CatalogEntry entry) => Enqueue([entry]);

    /// <summary>
    /// Queues entries and returns at once; the first index should use this, so the start of
    /// the work is logged once with the number of files.
    /// </summary>
    public void Enqueue(IEnumerable<CatalogEntry> entries)
    {
        var work = new List<CatalogEntry>();
        foreach (var entry in entries)
        {
            if (entry.Negotiable && _options.Enabled && _codings.Length > 0)
            {
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

        bool starts;
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            starts = _pending == 0;
            if (starts)
            {
                _idle = NewIdleSource(completed: false);
            }

            _pending += work.Count;
        }

        if (starts)
        {
            CompressionLog.Started(_logger, work.Count);
            _ = ReportAsync(_idle.Task, FilesProcessed, FilesCompressed, BytesIn, BytesOut);
        }

        foreach (var entry in work)
        {
            // Unbounded: TryWrite fails only once the writer is completed, by Dispose.
            _queue.Writer.TryWrite(entry);
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

    /// <summary>Stops the workers. A file being compressed is finished but not published; the rest are dropped.</summary>
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

    private async Task WorkAsync()
    {
        var stopping = _stopping.Token;
        try
        {
            await foreach (var entry in _queue.Reader.ReadAllAsync(stopping))
            {
                Process(entry, stopping);
                lock (_gate)
                {
                    if (!_disposed && --_pending == 0)
                    {
                        _idle.TrySetResult();
                    }
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Disposed: the rest of the queue is dropped.
        }
    }

    private void Process(CatalogEntry entry, CancellationToken stopping)
    {
        EncodedVariants variants;
        try
        {
            variants = EncodeEntry(entry, stopping);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // The file vanished or became unreadable since the index; the watcher will bring a
            // new entry if it comes back. Until then it is served (or not) as indexed.
            CompressionLog.SourceUnreadable(_logger, entry.PhysicalPath, ex.Message);
            variants = EncodedVariants.None;
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // A bug in one file's compression must not stop the rest, nor leave WhenIdle waiting.
            CompressionLog.Failed(_logger, entry.PhysicalPath, ex);
            variants = EncodedVariants.None;
        }

        entry.PublishEncoded(variants);
        Interlocked.Increment(ref _filesProcessed);
        var smallest = Math.Min(variants.Brotli?.Length ?? long.MaxValue, Math.Min(variants.Zstd?.Length ?? long.MaxValue, variants.Gzip?.Length ?? long.MaxValue));
        if (smallest != long.MaxValue)
        {
            Interlocked.Increment(ref _filesCompressed);
            Interlocked.Add(ref _bytesIn, entry.Identity.Length);
            Interlocked.Add(ref _bytesOut, smallest);
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
