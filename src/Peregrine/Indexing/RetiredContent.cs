namespace Peregrine.Indexing;

/// <summary>
/// Asks the GC for a background full collection once the content retired since the last one
/// adds up. File content and compressed variants live as long as the snapshot that holds them,
/// which is long enough to reach gen 2; when a writer keeps replacing files, their old bytes pile
/// up there until the GC's own next full collection, and resident memory climbs by that much
/// before it falls back (docs/performance.md, "Memory under constant change"). The index knows when it drops
/// content, so it asks then: at most once per <see cref="MinInterval"/>, and only after
/// <see cref="MinBytes"/> were given back. The collection runs beside requests (background, not
/// blocking), so no request waits for it.
/// </summary>
internal sealed class RetiredContent
{
    /// <summary>Less than this retired since the last request is left to the GC's own schedule.</summary>
    public const long MinBytes = 4L * 1024 * 1024;

    /// <summary>The least time between two requests: a background collection of a heap of tens of MiB costs milliseconds of one core.</summary>
    public static readonly TimeSpan MinInterval = TimeSpan.FromSeconds(5);

    private long _retired;
    private long _lastRequest = Environment.TickCount64;
    private int _queued;
    private long _requests;

    /// <summary>Collections requested so far.</summary>
    public long Requests => Interlocked.Read(ref _requests);

    /// <summary>Counts <paramref name="bytes"/> given back; requests a collection when both bounds are passed.</summary>
    public void Add(long bytes)
    {
        if (bytes <= 0 || Interlocked.Add(ref _retired, bytes) < MinBytes)
        {
            return;
        }

        var now = Environment.TickCount64;
        if (now - Volatile.Read(ref _lastRequest) < (long)MinInterval.TotalMilliseconds || Interlocked.Exchange(ref _queued, 1) != 0)
        {
            return;
        }

        Volatile.Write(ref _lastRequest, now);
        Interlocked.Exchange(ref _retired, 0);
        Interlocked.Increment(ref _requests);

        // Off the caller's thread: the caller may hold the catalog's or the compressor's lock.
        ThreadPool.UnsafeQueueUserWorkItem(
            static state =>
            {
                GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: false);
                Interlocked.Exchange(ref ((RetiredContent)state!)._queued, 0);
            },
            this);
    }
}
