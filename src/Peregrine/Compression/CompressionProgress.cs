using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Peregrine.Catalog;

namespace Peregrine.Compression;

/// <summary>
/// What the compressor has done, counted as entries are published, and the log lines that
/// report it: one when a batch of work starts, one every <see cref="ReportInterval"/> while it
/// runs, and a summary when the queue is empty again.
/// </summary>
internal sealed class CompressionProgress
{
    private static readonly TimeSpan ReportInterval = TimeSpan.FromSeconds(2);

    private readonly ILogger _logger;
    private long _filesProcessed;
    private long _filesCompressed;
    private long _bytesIn;
    private long _bytesOut;

    public CompressionProgress(ILogger logger)
    {
        _logger = logger;
    }

    /// <summary>Entries whose variants have been published, with or without any variant.</summary>
    public long FilesProcessed => Interlocked.Read(ref _filesProcessed);

    /// <summary>Entries published with at least one variant.</summary>
    public long FilesCompressed => Interlocked.Read(ref _filesCompressed);

    /// <summary>The identity bytes of the entries counted by <see cref="FilesCompressed"/>.</summary>
    public long BytesIn => Interlocked.Read(ref _bytesIn);

    /// <summary>The smallest variant of each entry counted by <see cref="FilesCompressed"/>: what a client accepting every coding receives.</summary>
    public long BytesOut => Interlocked.Read(ref _bytesOut);

    /// <summary>Counts one entry whose work is done.</summary>
    public void Record(CatalogEntry entry, EncodedVariants variants)
    {
        var smallest = Math.Min(variants.Brotli?.Length ?? long.MaxValue, Math.Min(variants.Zstd?.Length ?? long.MaxValue, variants.Gzip?.Length ?? long.MaxValue));
        if (smallest != long.MaxValue)
        {
            Interlocked.Increment(ref _filesCompressed);
            Interlocked.Add(ref _bytesIn, entry.Identity.Length);
            Interlocked.Add(ref _bytesOut, smallest);
        }

        Interlocked.Increment(ref _filesProcessed);
    }

    /// <summary>
    /// Logs the start of a batch of <paramref name="files"/>, its progress until
    /// <paramref name="idle"/> completes, and then what the batch did.
    /// </summary>
    public void ReportBatch(int files, Task idle, Func<int> pending, CancellationToken stopping)
    {
        CompressionLog.Started(_logger, files);
        _ = ReportAsync(idle, pending, stopping);
    }

    private async Task ReportAsync(Task idle, Func<int> pending, CancellationToken stopping)
    {
        var (processed, compressed, bytesIn, bytesOut) = (FilesProcessed, FilesCompressed, BytesIn, BytesOut);
        var stopwatch = Stopwatch.StartNew();
        while (true)
        {
            await Task.WhenAny(idle, Task.Delay(ReportInterval, stopping)).ConfigureAwait(false);
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
            CompressionLog.Progress(_logger, done, done + pending(), stopwatch.ElapsedMilliseconds);
        }
    }
}
