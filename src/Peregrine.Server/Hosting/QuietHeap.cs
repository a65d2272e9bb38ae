using Peregrine.Compression;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Hosting;

/// <summary>
/// One compacting collection each time the server goes quiet after heavy allocation. Under load
/// the GC collects gen 0 often and gen 2 seldom, and what HTTP/2 and TLS leave behind is mostly
/// gen 2 and pinned: stream and connection blocks dropped by their pools, buffers of closed
/// connections. When the load stops nothing allocates, so no collection comes to take them, and
/// the server stays at its peak for as long as it idles (docs/performance.md, "Memory
/// after a load"). Every <see cref="Interval"/> this looks at
/// how much the process has allocated: once at least <see cref="MinAllocatedBytes"/> since the
/// last such collection, and less than <see cref="QuietBytes"/> in the last interval, the load is
/// over and it collects (<see cref="Collect"/>). A server under steady load is never quiet and is
/// left to the GC's own schedule; one that allocates nothing is never collected again.
/// </summary>
/// <remarks>
/// Only the server does this: in the library, the application owns its heap.
/// </remarks>
internal sealed class QuietHeap : IDisposable
{
    /// <summary>How often the allocation count is read.</summary>
    internal static readonly TimeSpan Interval = TimeSpan.FromSeconds(5);

    /// <summary>Allocation since the last collection that makes one worth its pause: about 5 times the AOT server's gen-0 budget.</summary>
    internal const long MinAllocatedBytes = 32L * 1024 * 1024;

    /// <summary>At most this allocated in one <see cref="Interval"/> counts as quiet: the load that grew the heap has stopped or thinned out.</summary>
    internal const long QuietBytes = 1024 * 1024;

    private readonly Func<long> _allocated;
    private readonly Action _collect;
    private readonly Timer? _timer;
    private long _atTick;
    private long _atCollection;
    private long _collections;

    private QuietHeap(Func<long> allocated, Action collect, bool start)
    {
        _allocated = allocated;
        _collect = collect;
        _atTick = _atCollection = allocated();
        if (start)
        {
            _timer = new Timer(static state => ((QuietHeap)state!).Tick(), this, Interval, Interval);
        }
    }

    /// <summary>Collections so far.</summary>
    internal long Collections => Interlocked.Read(ref _collections);

    /// <summary>Starts the periodic look at the process's allocation.</summary>
    public static QuietHeap Start()
        => new(static () => GC.GetTotalAllocatedBytes(precise: false), Collect, start: true);

    /// <summary>For tests: the counter and the collection given, and <see cref="Tick"/> called by the test rather than a timer.</summary>
    internal static QuietHeap ForTest(Func<long> allocated, Action collect) => new(allocated, collect, start: false);

    /// <summary>One look: collects when enough was allocated since the last collection and the last interval was quiet.</summary>
    /// <returns>True when the collection ran.</returns>
    internal bool Tick()
    {
        var now = _allocated();
        var lastInterval = now - _atTick;
        _atTick = now;
        if (now - _atCollection < MinAllocatedBytes || lastInterval > QuietBytes)
        {
            return false;
        }

        _collect();
        Interlocked.Increment(ref _collections);

        // The collection's own bookkeeping allocates a little; count from after it.
        _atTick = _atCollection = _allocated();
        return true;
    }

    /// <summary>
    /// The connection pools' free blocks let go (<see cref="LargeBlockMemoryPool.TrimAll"/>), then
    /// a full blocking collection, which frees the garbage (pinned blocks included: they are
    /// swept, never moved); then, if what is left is at most <see cref="SettledHeap.MaxHeapBytes"/>,
    /// a compacting one in the GC's aggressive mode, which gives the emptied regions back to the
    /// system at once; then <c>malloc_trim</c>, for what closed connections released to the C
    /// heap. The bound is on live data, as <see cref="SettledHeap"/>'s: a large tree's content
    /// would make the compaction a long pause.
    /// </summary>
    internal static void Collect()
    {
        LargeBlockMemoryPool.TrimAll();
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: false);
        if (GC.GetTotalMemory(forceFullCollection: false) <= SettledHeap.MaxHeapBytes)
        {
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        }

        NativeHeap.Trim();
    }

    public void Dispose() => _timer?.Dispose();
}
