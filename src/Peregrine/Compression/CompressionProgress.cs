using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// What the compressor has done, counted as entries are published, and the log lines that
/// report it: one when a batch of work starts, one every <see cref="ReportInterval"/> while its
/// first pass runs, one when that pass is done, and a summary when the final pass is too.
/// </summary>
internal sealed class CompressionProgress
{
    private static readonly TimeSpan ReportInterval = TimeSpan.FromSeconds(2);

    private readonly ILogger _logger;
    private long _filesProcessed;
    private long _filesCompressed;
    private long _bytesIn;
    private long _bytesOut;
    private long _filesUpgraded;
    private long _filesFinal;

    public CompressionProgress(ILogger logger)
    {
        _logger = logger;
    }

    /// <summary>Entries whose variants have been published, with or without any variant.</summary>
    public long FilesProcessed => Interlocked.Read(ref _filesProcessed);

    /// <summary>Entries whose first-pass variants the final pass has replaced.</summary>
    public long FilesUpgraded => Interlocked.Read(ref _filesUpgraded);

    /// <summary>Entries published with at least one variant.</summary>
    public long FilesCompressed => Interlocked.Read(ref _filesCompressed);

    /// <summary>The identity bytes of the entries counted by <see cref="FilesCompressed"/>.</summary>
    public long BytesIn => Interlocked.Read(ref _bytesIn);

    /// <summary>The smallest variant of each entry counted by <see cref="FilesCompressed"/>: what a client accepting every coding receives.</summary>
    public long BytesOut => Interlocked.Read(ref _bytesOut);

    /// <summary>Entries whose compression is done at final quality, or found not worth doing (dropped ones included).</summary>
    public long FilesFinal => Interlocked.Read(ref _filesFinal);

    /// <summary>Counts one entry whose compression is done for good.</summary>
    public void RecordFinal() => Interlocked.Increment(ref _filesFinal);

    /// <summary>Counts one entry whose final variants replaced its first-pass ones.</summary>
    public void RecordUpgrade() => Interlocked.Increment(ref _filesUpgraded);

    /// <summary>Counts one entry whose first pass is done.</summary>
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
    /// <paramref name="idle"/> completes, the end of its first pass when
    /// <paramref name="firstPass"/> completes, and then what the batch did.
    /// </summary>
    public void ReportBatch(int files, Task idle, Task firstPass, Func<int> pending, CancellationToken stopping)
    {
        CompressionLog.Started(_logger, files);
        _ = ReportAsync(idle, firstPass, pending, stopping);
    }

    private async Task ReportAsync(Task idle, Task firstPass, Func<int> pending, CancellationToken stopping)
    {
        var (processed, compressed, bytesIn, bytesOut, upgraded) = (FilesProcessed, FilesCompressed, BytesIn, BytesOut, FilesUpgraded);
        var stopwatch = Stopwatch.StartNew();
        var firstPassLogged = false;
        while (true)
        {
            await Task.WhenAny(idle, firstPassLogged ? idle : firstPass, Task.Delay(ReportInterval, stopping)).ConfigureAwait(false);
            if (stopping.IsCancellationRequested)
            {
                return;
            }

            if (!firstPassLogged && firstPass.IsCompleted)
            {
                firstPassLogged = true;
                CompressionLog.FirstPassFinished(_logger, FilesCompressed - compressed, FilesProcessed - processed, stopwatch.ElapsedMilliseconds);
            }

            if (idle.IsCompleted)
            {
                CompressionLog.Finished(
                    _logger,
                    FilesCompressed - compressed,
                    FilesProcessed - processed,
                    BytesIn - bytesIn,
                    BytesOut - bytesOut,
                    FilesUpgraded - upgraded,
                    stopwatch.ElapsedMilliseconds);
                return;
            }

            if (!firstPassLogged)
            {
                // Files queued while the work runs join it, so the total can grow between reports.
                var done = FilesProcessed - processed;
                CompressionLog.Progress(_logger, done, done + pending(), stopwatch.ElapsedMilliseconds);
            }
        }
    }
}
