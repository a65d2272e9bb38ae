namespace Peregrine.Compression;

/// <summary>
/// Giving the encoders' native memory back. Brotli and zstd allocate their windows and hash
/// tables with <c>malloc</c>, megabytes a file, and glibc keeps what they free (NativeHeap). Once
/// the compressor has stayed idle for <see cref="TrimDelay"/>, <c>malloc_trim</c> hands it back.
/// Not at once: under a writer that keeps changing files the queue empties between every two
/// batches, and a trim each time gave the memory back only for the next batch to take it again,
/// moving resident memory by about 30 MiB at moments nothing predicts (docs/performance.md,
/// "Native heap after compression"). Held, the peak stays put while changes keep coming, and
/// goes back within seconds of the last.
/// </summary>
internal sealed partial class Compressor
{
    /// <summary>How long the compressor stays idle before the native heap is trimmed.</summary>
    internal static readonly TimeSpan TrimDelay = TimeSpan.FromSeconds(2);

    private Timer? _trim;
    private long _trims;

    /// <summary>Native heap trims so far.</summary>
    internal long Trims => Interlocked.Read(ref _trims);

    /// <summary>Called at each moment the compressor becomes idle: the trim comes <see cref="TrimDelay"/> after the last of them, if it is still idle then.</summary>
    private void TrimWhenQuiet()
    {
        lock (_gate)
        {
            if (_disposed)
            {
                return;
            }

            _trim ??= new Timer(static state => ((Compressor)state!).TrimIfIdle(), this, Timeout.InfiniteTimeSpan, Timeout.InfiniteTimeSpan);
            _trim.Change(TrimDelay, Timeout.InfiniteTimeSpan);
        }
    }

    private void TrimIfIdle()
    {
        lock (_gate)
        {
            // Busy again: the end of that work arms the timer anew.
            if (_disposed || !_idle.Task.IsCompleted)
            {
                return;
            }
        }

        NativeHeap.Trim();
        Interlocked.Increment(ref _trims);
    }
}
