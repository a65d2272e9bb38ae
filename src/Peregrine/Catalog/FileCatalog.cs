using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

// Catalog: the bottom of the flow. A request runs catalog -> negotiation -> conditional ->
// ranges -> send, and this stage answers its first question, which entry a path names, from an
// index built before any request: scan the root (TreeScanner), build the entries (EntryBuilder:
// content type, ETag, bytes in memory, header values), add the folders (DirectoryEntries), freeze
// the snapshot (CatalogSnapshot, PathIndex), and watch for changes (CatalogWatcher) to build the
// next one. A path that is not in the index is never handed to the file system. The catalog knows
// nothing of the stages above it: compression follows the snapshots it publishes (Published), and
// listings render the sorted children a folder's entry holds.

namespace Peregrine.Catalog;

/// <summary>
/// Holds the current snapshot and keeps it current. Readers take <see cref="Current"/> once
/// per request and never block; a rebuild happens off to the side and replaces the snapshot
/// with one reference write, so a request sees either the old site or the new one, whole.
/// </summary>
internal sealed class FileCatalog : IDisposable
{
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private readonly SemaphoreSlim _refreshSignal = new(0);
    private readonly CancellationTokenSource _stopping = new();
    private volatile CatalogSnapshot? _current;
    private CatalogWatcher? _watcher;
    private int _started;
    private int _refreshPending;

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

    /// <summary>Completes when the first index is in force; faults if it failed.</summary>
    public Task Ready => _ready.Task;

    /// <summary>How many snapshots have been published, the first included.</summary>
    public int Generation { get; private set; }

    /// <summary>
    /// Called with each published snapshot and the one it replaced (null for the first), on the
    /// thread that built it, after it is in force: how the stages above the catalog (compression)
    /// learn of new and dropped entries without the catalog knowing them.
    /// </summary>
    public event Action<CatalogSnapshot, CatalogSnapshot?>? Published;

    /// <summary>Paths in a first index above which its scratch memory is handed back to the system.</summary>
    private const int LargeTree = 50_000;

    /// <summary>Starts the first index on the thread pool, then watching. Safe to call more than once.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _ = Task.Run(RunAsync);
        }
    }

    /// <summary>
    /// Asks for a rebuild. Requests that arrive while one is pending are folded into it; the
    /// rebuild waits <see cref="WatchOptions.CoalescingDelay"/> for a burst to settle.
    /// </summary>
    public void RequestRefresh()
    {
        if (Interlocked.Exchange(ref _refreshPending, 1) == 0)
        {
            _refreshSignal.Release();
        }
    }

    private async Task RunAsync()
    {
        if (_options.Watch.Enabled)
        {
            // Watching starts before the first index, so a file written while it is being
            // built is not missed: its event asks for a rebuild straight after.
            _watcher = new CatalogWatcher(this, _options, _logger);
            if (FileSystemProbe.RealPath(Path.GetFullPath(_options.Root)) is { } root)
            {
                _watcher.Watch(root);
            }
        }

        try
        {
            var first = new CatalogBuilder(_options, Budget, _logger).Build(cancellationToken: _stopping.Token);
            if (first.Count >= LargeTree)
            {
                // The scan of a large tree leaves its scratch (directory entries, path strings, the
                // build's dictionary) in the heap, and the GC keeps that memory committed, far
                // above what the snapshot holds live. One compacting collection before the first
                // request gives most of it back and packs the entries together, for a slightly
                // later first response, once, while requests wait for the index anyway
                // (bench/RESULTS.md, "Catalog scale", "Then: a faster index", has the figures).
                GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            }

            Publish(first);
            _ready.TrySetResult();
        }
        catch (Exception ex)
        {
            // Kept as the Ready fault: requests then answer 503 rather than hang.
            PeregrineLog.IndexFailed(_logger, _options.Root, ex);
            _ready.TrySetException(ex);
            return;
        }

        if (_watcher is null)
        {
            return;
        }

        _watcher.Retarget(_current!);
        try
        {
            while (true)
            {
                await _refreshSignal.WaitAsync(_stopping.Token);
                await Task.Delay(_options.Watch.CoalescingDelay, _stopping.Token);
                Interlocked.Exchange(ref _refreshPending, 0);
                Rebuild();
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    private void Rebuild()
    {
        var previous = _current!;
        CatalogSnapshot next;
        try
        {
            next = new CatalogBuilder(_options, Budget, _logger).Build(previous, _stopping.Token);
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // The root is missing or unreadable for the moment (between the two renames of a
            // deploy), or a file vanished mid-scan: keep serving the last good snapshot and try
            // again shortly, so that a change is never left unindexed for want of an event.
            PeregrineLog.RebuildFailed(_logger, _options.Root, ex.Message);
            _ = Task.Delay(TimeSpan.FromSeconds(1), _stopping.Token).ContinueWith(
                _ => RequestRefresh(), CancellationToken.None, TaskContinuationOptions.OnlyOnRanToCompletion, TaskScheduler.Default);
            return;
        }

        Publish(next);
        if (next.Root != previous.Root || next.RootIdentity != previous.RootIdentity)
        {
            PeregrineLog.RootReplaced(_logger, _options.Root, next.Root);
        }

        _watcher?.Retarget(next);
        ReleaseDropped(previous, next);
    }

    private void Publish(CatalogSnapshot snapshot)
    {
        var previous = _current;
        _current = snapshot;
        Generation++;
        Published?.Invoke(snapshot, previous);
    }

    /// <summary>Gives back the file content of entries the new snapshot no longer holds.</summary>
    private void ReleaseDropped(CatalogSnapshot previous, CatalogSnapshot next)
    {
        // Each file once (an index document is also its folder's "/" entry), so each is
        // released once; variants are released by the compressor, which follows Published.
        foreach (var entry in previous.Files)
        {
            if (entry.Identity.Content is { } content && !next.Holds(entry))
            {
                Budget.Release(content.Length);
            }
        }
    }

    public void Dispose()
    {
        _stopping.Cancel();
        _watcher?.Dispose();
    }
}
