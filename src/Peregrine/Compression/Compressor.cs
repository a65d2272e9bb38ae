using System.Collections.Concurrent;
using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Live;

// Compression: beside the index flow rather than in the request's. After each snapshot is
// published (catalog), the compressor makes the encoded variants of its negotiable files in the
// background (Compressor schedules, VariantEncoder makes each variant from a sidecar, a cache file
// or the encoder) and publishes them on their entries: a fast pass first, files that requests
// asked for ahead of the rest, then a final pass at the best ratio on low-priority threads. A
// request never waits for it: negotiation (catalog -> negotiation -> conditional -> ranges ->
// send) chooses among the variants published so far, and until then sends the identity bytes.

namespace Peregrine.Compression;

/// <summary>
/// Compression, the stage that follows the catalog: it makes the encoded variants of negotiable
/// files in the background once an index is in force. Requests are served unencoded until an
/// entry's variants are published on it, then negotiation (Select/) may choose them.
/// </summary>
/// <remarks>
/// <para>
/// The catalog knows nothing of this stage: the compressor subscribes to the snapshots it
/// publishes (<see cref="Follow"/>), queues the entries each one brings, and gives back the
/// memory of the variants of entries each one drops. It alone reserves and releases variant
/// memory against the catalog's <see cref="MemoryBudget"/>; the catalog accounts for the
/// identity bytes it holds.
/// </para>
/// <para>
/// Two passes. The first gives every file a variant soon after start: Brotli 5, zstd 3 and
/// gzip 6, or the final bytes straight away when a sidecar or the cache has them. A request
/// that would take an encoded answer and finds none reports the entry
/// (<see cref="EncodingDemand"/>), and the first-pass workers take reported entries before the
/// rest of the queue. Once the first pass is done, the final pass makes Brotli 11, zstd 19 and
/// gzip 9 of each file that got fast variants, and publishes them over the fast ones (each
/// variant's ETag is the hash of its bytes, so the new ones have new tags). The final pass
/// runs on threads at the lowest priority (<see cref="WorkerPriority"/>), and waits whenever
/// the first pass has work.
/// </para>
/// <para>
/// This type is the scheduling: the queues, the worker threads, publishing and retiring. How
/// each variant is made (sidecar, cache file or encoder) is <see cref="VariantEncoder"/>.
/// </para>
/// </remarks>
internal sealed partial class Compressor : EncodingDemand, IDisposable
{
    private readonly CompressionOptions _options;
    private readonly ILogger _logger;
    private readonly VariantEncoder _encoder;
    private readonly CompressionProgress _progress;
    private readonly Channel<CatalogEntry> _queue;

    // Entries a request asked for, taken before _queue; each is in _queue as well, and whichever
    // copy is taken second finds it claimed (no longer in _queued) and skips it.
    private readonly ConcurrentQueue<CatalogEntry> _requested = new();

    // Entries served with first-pass variants and waiting for the final pass, oldest first, and
    // each one's place in that queue; both under _gate. An entry the catalog drops while it
    // waits leaves the queue at once, and its memory with it (Retire), so the queue holds at most
    // one upgrade per entry in force however fast files change. The final pass runs only while
    // the first pass is idle, and under a writer that keeps the first pass busy, a queue that
    // let dropped versions wait for it grew with every version of every changed file, each
    // holding its bytes and fast variants (docs/performance.md, "Compression threads").
    private readonly LinkedList<PendingUpgrade> _upgrades = new();
    private readonly Dictionary<CatalogEntry, LinkedListNode<PendingUpgrade>> _upgradeNodes = new(ReferenceEqualityComparer.Instance);
    private readonly SemaphoreSlim _upgradeSignal = new(0);

    // Set while the first pass has nothing queued: the final pass waits on it.
    private readonly ManualResetEventSlim _firstPassIdle = new(initialState: true);

    // Not disposed: workers and the progress report may still read its token after Dispose,
    // and a source without a timer holds nothing that needs freeing.
    private readonly CancellationTokenSource _stopping = new();

    // Entries queued, being compressed or waiting for the final pass, those among them not yet
    // taken by a first-pass worker, and those the catalog has dropped since: by reference,
    // since two snapshots may hold different entries for one path.
    private readonly HashSet<CatalogEntry> _inFlight = new(ReferenceEqualityComparer.Instance);
    private readonly HashSet<CatalogEntry> _queued = new(ReferenceEqualityComparer.Instance);
    private readonly HashSet<CatalogEntry> _retired = new(ReferenceEqualityComparer.Instance);

    private readonly Lock _gate = new();
    private FileCatalog? _followed;
    private int _pending;
    private int _upgrading;
    private bool _disposed;
    private TaskCompletionSource _idle = NewIdleSource(completed: true);
    private TaskCompletionSource _firstPass = NewIdleSource(completed: true);

    public Compressor(CompressionOptions options, MemoryBudget budget, ILogger logger)
    {
        _options = options;
        _logger = logger;
        var codings = ResolveCodings(options, logger);
        _encoder = new VariantEncoder(options, codings, budget, logger);
        _progress = new CompressionProgress(logger);
        Workers = !options.Enabled || codings.Length == 0 ? 0
            : options.MaxParallelism > 0 ? options.MaxParallelism
            : Math.Max(1, Environment.ProcessorCount - 1);
        _queue = Channel.CreateUnbounded<CatalogEntry>(new UnboundedChannelOptions { SingleReader = Workers == 1 });
        for (var i = 0; i < Workers; i++)
        {
            // Dedicated threads rather than the thread pool: Brotli at quality 11 holds a thread
            // for seconds on a large file (docs/performance.md, "Compression
            // threads"), and a pool thread held that long is one Kestrel cannot use for requests
            // until the pool notices and grows. The final pass has threads of its own because
            // their priority is lowered for good (raising it again needs a privilege on Linux);
            // it runs only while the first pass has nothing queued, so the two never add up to
            // more than Workers busy threads.
            new Thread(Work) { IsBackground = true, Name = "Peregrine compression" }.Start();
            new Thread(WorkFinalPass) { IsBackground = true, Name = "Peregrine final compression" }.Start();
        }
    }

    /// <summary>How many files are compressed at once; 0 when there is nothing to produce (compression off, or no usable coding).</summary>
    public int Workers { get; }

    /// <summary>The codings produced, in the configured order, less any that cannot be (zstd without libzstd).</summary>
    public IReadOnlyList<ContentCoding> Codings => _encoder.Codings;

    /// <summary>Entries waiting for their first variants (queued, or in the first pass).</summary>
    public int Pending => Volatile.Read(ref _pending);

    /// <summary>Entries served with first-pass variants, waiting for (or in) the final pass.</summary>
    public int Upgrading => Volatile.Read(ref _upgrading);

    /// <inheritdoc cref="CompressionProgress.FilesProcessed"/>
    public long FilesProcessed => _progress.FilesProcessed;

    /// <inheritdoc cref="CompressionProgress.FilesUpgraded"/>
    public long FilesUpgraded => _progress.FilesUpgraded;

    /// <inheritdoc cref="CompressionProgress.FilesFinal"/>
    public long FilesFinal => _progress.FilesFinal;

    /// <summary>
    /// This compressor's progress, for the instruments and the health endpoint; final when
    /// neither pass has work left (whether the catalog has an index yet is the caller's to add).
    /// </summary>
    public Metrics.CompressionTotals Totals()
    {
        lock (_gate)
        {
            return new(_pending, _upgrading, _progress.FilesFinal, _pending == 0 && _upgrading == 0);
        }
    }

    /// <inheritdoc cref="CompressionProgress.FilesCompressed"/>
    public long FilesCompressed => _progress.FilesCompressed;

    /// <inheritdoc cref="CompressionProgress.BytesIn"/>
    public long BytesIn => _progress.BytesIn;

    /// <inheritdoc cref="CompressionProgress.BytesOut"/>
    public long BytesOut => _progress.BytesOut;

    /// <summary><see cref="BytesIn"/> less <see cref="BytesOut"/>.</summary>
    public long BytesSaved => BytesIn - BytesOut;

    /// <inheritdoc cref="VariantEncoder.Compressions"/>
    public long Compressions => _encoder.Compressions;

    /// <inheritdoc cref="VariantEncoder.FastCompressions"/>
    public long FastCompressions => _encoder.FastCompressions;

    /// <summary>
    /// Raised on a worker thread after variants are published on an entry: with
    /// <see langword="true"/> when they are final (nothing better is coming for it), with
    /// <see langword="false"/> for first-pass variants that the final pass will replace.
    /// </summary>
    internal event Action<CatalogEntry, EncodedVariants, bool>? VariantsPublished;

    /// <summary>
    /// The deltas against compression dictionaries (RFC 9842), made beside the variants when
    /// dictionaries are on and libzstd can be used; <see langword="null"/> otherwise.
    /// </summary>
    internal DeltaMaker? Deltas { get; private set; }

    /// <inheritdoc cref="VariantEncoder.CacheHits"/>
    public long CacheHits => _encoder.CacheHits;

    /// <inheritdoc cref="VariantEncoder.SidecarsUsed"/>
    public long SidecarsUsed => _encoder.SidecarsUsed;

    /// <summary>
    /// Queues one entry and returns at once. Entries that are not negotiable, or when
    /// compression is off, are published with no variants straight away. An entry already
    /// queued, or whose variants are already published, is left alone: a changed file comes
    /// back as a new entry.
    /// </summary>
    public void Enqueue(CatalogEntry entry) => Enqueue([entry]);

    /// <summary>
    /// Queues entries and returns at once, as <see cref="Enqueue(CatalogEntry)"/> does; the
    /// start of the work is logged once with the number of files.
    /// </summary>
    public void Enqueue(IEnumerable<CatalogEntry> entries)
    {
        var work = new List<CatalogEntry>();
        Task? batch = null, firstPass = null;
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

                if (entry.Negotiable && _options.Enabled && _encoder.Codings.Count > 0)
                {
                    _inFlight.Add(entry);
                    _queued.Add(entry);
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
                _firstPassIdle.Reset();
                _firstPass = NewIdleSource(completed: false);
                firstPass = _firstPass.Task;
                if (_upgrading == 0)
                {
                    _idle = NewIdleSource(completed: false);
                    batch = _idle.Task;
                }
            }

            _pending += work.Count;
        }

        if (batch is not null)
        {
            _progress.ReportBatch(work.Count, batch, firstPass!, () => Pending, _stopping.Token);
        }

        foreach (var entry in work)
        {
            // From now until its first variants are published, a request for it is reported.
            entry.ReportDemandTo(this);

            // Unbounded: TryWrite fails only once the writer is completed, by Dispose.
            _queue.Writer.TryWrite(entry);
        }
    }

    /// <summary>
    /// A request wants <paramref name="entry"/> encoded: the first-pass workers take it next.
    /// Called on the request path at most once per entry; enqueueing on a concurrent queue takes
    /// no lock and allocates only a new segment now and then.
    /// </summary>
    public override void Requested(CatalogEntry entry) => _requested.Enqueue(entry);

    /// <summary>Completes when no entry waits for its first variants (at once if none does), or on dispose.</summary>
    public Task WhenFirstPassDone()
    {
        lock (_gate)
        {
            return _firstPass.Task;
        }
    }

    /// <summary>Completes when nothing is queued or in flight in either pass (at once if that is already so), or on dispose.</summary>
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
            _upgrading = 0;
            _firstPass.TrySetResult();
            _idle.TrySetResult();
        }

        if (_followed is not null)
        {
            _followed.Published -= OnPublished;
            if (Deltas is not null)
            {
                _followed.Published -= Deltas.OnPublished;
            }
        }

        Deltas?.Dispose();

        _queue.Writer.TryComplete();
        _stopping.Cancel();
        _trim?.Dispose();
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
}
