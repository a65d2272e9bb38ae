using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Logging;
using Peregrine.Sources;

// Catalog: the bottom of the flow. A request runs catalog -> negotiation -> conditional ->
// ranges -> send, and this stage answers its first question, which entry a path names, from an
// index built before any request: scan the root (TreeScanner), build the entries (EntryBuilder:
// content type, ETag, bytes in memory, header values), add the folders (DirectoryEntries), freeze
// the snapshot (CatalogSnapshot, PathIndex), and watch for changes (CatalogWatcher) to build the
// next one. A path that is not in the index is never handed to the file system. The catalog knows
// nothing of the stages above it: compression follows the snapshots it publishes (Published), and
// listings render the sorted children a folder's entry holds.

namespace Peregrine.Live;

/// <summary>
/// Holds the current snapshot and keeps it current. Readers take <see cref="Current"/> once
/// per request and never block; a rebuild happens off to the side and replaces the snapshot
/// with one reference write, so a request sees either the old site or the new one, whole.
/// </summary>
/// <remarks>
/// One thread, the publisher, makes and publishes every snapshot: the first index, each set of
/// changed paths and each whole rescan. Everything that learns of a change (the watchers, the
/// timers, a request that found a file not as indexed) only writes it to the publisher's
/// channel and goes on; nothing calls into the catalog to build a snapshot, and nothing is called
/// back while one is built, apart from the watcher's read-only answer to "has a writer come back
/// to this path?".
/// </remarks>
internal sealed partial class FileCatalog : IDisposable
{
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly CancellationTokenSource _stopping = new();

    // What the publisher is to take in, in the order it was learnt.
    // Synchronous continuations: a post wakes the publisher's blocked thread directly, without
    // waiting for a thread-pool thread that a starved pool may not give.
    private readonly Channel<IndexChange> _changes = Channel.CreateUnbounded<IndexChange>(new UnboundedChannelOptions { SingleReader = true, AllowSynchronousContinuations = true });
    private readonly IncrementalUpdate _update;

    // Copies of the published versions of the files streamed from disk; null when off.
    private readonly VersionCopies? _copies;

    // Files the last rescan left at their previous version because they were still changing, and
    // when a rescan first found each so; replaced by each rescan, on the publisher thread.
    private Dictionary<string, long> _unsettledSince = new(StringComparer.Ordinal);

    // The earliest time (DateTime ticks, UTC) at which a file the rescan under way leaves
    // unsettled is to be taken; long.MaxValue while it has found none. Under _unsettledSince's lock.
    private long _settlesAt;

    // When the publisher is to rescan by itself (a Stopwatch timestamp; 0: not asked): once the
    // files a rescan left unsettled have held still long enough, or a second after a failure.
    // On the publisher thread, whose own wait on the channel ends then.
    private long _lookAgainAt;

    // The publisher's wait on the channel, kept across a wait that ended at _lookAgainAt.
    private Task<bool>? _waiting;
    private volatile CatalogSnapshot? _current;
    private CatalogWatcher? _watcher;
    private Thread? _publisher;
    private int _started;
    private int _refreshPending;
    private volatile bool _rescanning;

    public FileCatalog(IOptions<PeregrineOptions> options, ILoggerFactory loggerFactory)
        : this(options.Value, loggerFactory)
    {
    }

    public FileCatalog(PeregrineOptions options, ILoggerFactory loggerFactory)
    {
        _options = options;
        _logger = loggerFactory.CreateLogger("Peregrine");
        Budget = new MemoryBudget(_options.MemoryBudget);
        Headers = new ConfiguredHeaders(_options);
        _copies = VersionCopies.For(_options, _logger);
        _update = new IncrementalUpdate(_options, Budget, _logger, _copies);
    }

    public PeregrineOptions Options => _options;

    /// <summary>Response headers derived from options, shared by the middleware and the fast path.</summary>
    public ConfiguredHeaders Headers { get; }

    /// <summary>
    /// The memory budget shared by file content and compressed variants. The catalog reserves
    /// and releases the file content it holds; whoever makes variants accounts for theirs.
    /// </summary>
    public MemoryBudget Budget { get; }

    /// <summary>The snapshot in force, or <see langword="null"/> before the first index is complete.</summary>
    public CatalogSnapshot? Current => _current;

    /// <summary>True when <paramref name="path"/> is one of this catalog's private copies of a version, which no writer touches.</summary>
    internal bool HoldsCopy(string? path) => _copies?.Holds(path) == true;

    /// <summary>Completes when the first index is in force; faults if it failed.</summary>
    public Task Ready => _ready.Task;

    /// <summary>How many snapshots have been published, the first included.</summary>
    public int Generation { get; private set; }

    /// <summary>
    /// Called with each published snapshot and the one it replaced (null for the first), on the
    /// thread that built it, after it is in force: how the stages above the catalog (compression)
    /// learn of new and dropped entries without the catalog knowing them.
    /// </summary>
    /// <remarks>
    /// The delta lists the file entries an incremental update brought in and dropped; it is
    /// <see langword="null"/> when a whole rescan made the snapshot, and the two must be compared.
    /// </remarks>
    public event Action<CatalogSnapshot, CatalogSnapshot?, SnapshotDelta?>? Published;

    /// <summary>
    /// True while a writer is known to be at <paramref name="relativePath"/> (the watcher saw it
    /// written and not yet closed): the version on disk is not one to send.
    /// </summary>
    public bool IsBeingWritten(string relativePath)
        => _watcher is { } watcher && _current is { } current && watcher.IsBeingWritten(current.Mounts, relativePath);

    /// <summary>Paths in a first index above which its scratch memory is handed back to the system.</summary>
    private const int LargeTree = 50_000;

    /// <summary>The name of the thread that makes and publishes every snapshot.</summary>
    internal const string PublisherThreadName = "Peregrine publisher";

    /// <summary>Starts the publisher: watching, the first index, then the changes. Safe to call more than once.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _publisher = new Thread(RunPublisher) { IsBackground = true, Name = PublisherThreadName };
            _publisher.Start();
        }
    }

    /// <summary>
    /// True from a rescan's request until its snapshot is published: the rescan resolves every
    /// root afresh, so a root check that finds a root moved meanwhile has nothing to ask for.
    /// </summary>
    internal bool RescanUnderWay => _rescanning || Volatile.Read(ref _refreshPending) != 0;

    /// <summary>
    /// Asks for a whole rescan. Requests that arrive while one is pending are folded into it; the
    /// rescan waits <see cref="WatchOptions.CoalescingDelay"/> for a burst to settle.
    /// </summary>
    public void RequestRefresh()
    {
        if (Interlocked.Exchange(ref _refreshPending, 1) == 0)
        {
            _changes.Writer.TryWrite(IndexChange.Rescan);
        }
    }

    /// <summary>
    /// Tells the publisher that <paramref name="watcher"/> holds a batch of changed paths. The
    /// publisher takes the batch when it comes to it (<see cref="InotifyWatcher.TakeBatch"/>), so
    /// changes that arrive while it is busy join that batch rather than queue behind it.
    /// </summary>
    internal void Post(InotifyWatcher watcher) => _changes.Writer.TryWrite(new IndexChange(watcher.Root, null, watcher));

    /// <summary>
    /// Hands the publisher paths to take as they stand now, without asking about writers: a file
    /// written for longer than <see cref="WatchOptions.OpenWriteLimit"/> (see <see cref="ApplyChanges"/>).
    /// </summary>
    internal void Post(string root, IReadOnlyCollection<ChangedPath> paths) => _changes.Writer.TryWrite(new IndexChange(root, paths, null));

    /// <summary>True when the watcher follows writers to their close (inotify).</summary>
    public bool HasCloseEvents => _watcher?.HasCloseEvents == true;

    /// <summary>
    /// Told by a sender that a file is not as indexed. With close events the watcher brings the
    /// change once its writer is done, and a rescan now would only race the writer; without
    /// them, a rescan is asked for.
    /// </summary>
    public void NoticeChanged()
    {
        if (_watcher?.HasCloseEvents != true)
        {
            RequestRefresh();
        }
    }

    private void Publish(CatalogSnapshot snapshot, SnapshotDelta? delta)
    {
        var previous = _current;
        _current = snapshot;
        Generation++;
        Published?.Invoke(snapshot, previous, delta);
    }

    /// <summary>Gives back the file content and the copies of entries the new snapshot no longer holds.</summary>
    private void ReleaseDropped(IEnumerable<CatalogEntry> dropped)
    {
        // Each file once (an index document is also its folder's "/" entry), so each is
        // released once; variants are released by the compressor, which follows Published.
        foreach (var entry in dropped)
        {
            if (entry.Identity.Content is { } content)
            {
                Budget.Release(content.Length);
            }
            else if (_copies is not null && _copies.Holds(entry.Identity.PhysicalPath))
            {
                _copies.Retire(entry.Identity.PhysicalPath!, entry.Identity.Length);
            }
        }
    }

    public void Dispose()
    {
        _stopping.Cancel();
        _changes.Writer.TryComplete();

        // The publisher stops at its next look at the token (a first index of a large tree, at
        // its next folder); what it holds (the watcher, the copies) is disposed after it.
        if (_publisher is { } publisher && publisher != Thread.CurrentThread && !publisher.Join(TimeSpan.FromSeconds(10)))
        {
            PeregrineLog.RebuildFailed(_logger, _options.Root, "the publisher did not stop within 10 s of the catalog's disposal");
        }

        _watcher?.Dispose();
        _copies?.Dispose();
    }
}

/// <summary>
/// One item of the publisher's channel: a watcher that holds a batch of changed paths, paths to
/// take under a root as they stand, or (no root) a whole rescan.
/// </summary>
internal sealed record IndexChange(string? Root, IReadOnlyCollection<ChangedPath>? Paths, InotifyWatcher? Watcher)
{
    public static readonly IndexChange Rescan = new(null, null, null);
}
