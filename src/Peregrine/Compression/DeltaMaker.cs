using System.Threading.Channels;
using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Live;

namespace Peregrine.Compression;

/// <summary>
/// Compression dictionaries (RFC 9842), the index side: keeps each version of a fingerprinted
/// asset (<see cref="KeptVersions"/>) and makes, in the background, the dcz delta of each version
/// in force against the other kept versions of the same asset, then publishes them on its entry
/// (<see cref="CatalogEntry.PublishDeltas"/>). Until they are published, a request gets the
/// best ordinary coding. Follows the snapshots as <see cref="Compressor"/> does, which owns it.
/// </summary>
/// <remarks>
/// One thread at the lowest priority does all of it, so the state (the kept versions, the
/// entries in force by asset) has one owner and no lock: snapshots post what they added and
/// dropped to its channel and go on. A delta is checked (it must decode to the file's bytes
/// against its dictionary, under the window a browser allows) before it is published; its
/// bytes are reserved from the memory budget, and without room it is not made.
/// </remarks>
internal sealed partial class DeltaMaker : IDisposable
{
    private readonly DictionaryOptions _options;
    private readonly MemoryBudget _budget;
    private readonly ILogger _logger;
    private readonly KeptVersions _kept;
    private readonly KeptVersionStore? _store;
    private readonly Channel<Job> _queue = Channel.CreateUnbounded<Job>(new UnboundedChannelOptions { SingleReader = true });
    private readonly Func<string, IReadOnlyList<KeyValuePair<string, string>>?>? _earlier;
    private readonly string _requestPath;

    // The entries in force of each asset, by reference (two snapshots may hold different entries
    // for one path), and the SHA-256 of each one's bytes. The worker's alone.
    private readonly Dictionary<string, List<CatalogEntry>> _inForce = new(StringComparer.Ordinal);
    private readonly Dictionary<CatalogEntry, byte[]> _hashes = new(ReferenceEqualityComparer.Instance);
    private readonly CancellationTokenSource _stopping = new();
    private readonly Lock _gate = new();
    private int _outstanding;
    private TaskCompletionSource _idle = Completed();
    private long _made;
    private long _savedGeneration;

    /// <summary>
    /// Starts the maker's thread. <paramref name="store"/> is where the kept versions are saved
    /// across restarts, read back before anything else (null: in memory only); the maker owns it.
    /// <paramref name="earlier"/>, for a source with a history of its own (a bucket,
    /// <see cref="PeregrineOptions.EarlierVersions"/>), makes the kept versions a function of
    /// that history and the files in force, never of what this process has seen; the files' URL
    /// paths are under <paramref name="requestPath"/>.
    /// </summary>
    public DeltaMaker(DictionaryOptions options, MemoryBudget budget, ILogger logger, KeptVersionStore? store = null, Func<string, IReadOnlyList<KeyValuePair<string, string>>?>? earlier = null, string requestPath = "")
    {
        _options = options;
        _budget = budget;
        _logger = logger;
        _kept = new KeptVersions(options, budget);
        _store = store;
        _earlier = earlier;
        _requestPath = requestPath;

        // Reading the store back counts as work outstanding, so that WhenIdle waits for it.
        _outstanding = 1;
        _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        new Thread(Work) { IsBackground = true, Name = "Peregrine dictionary deltas" }.Start();
    }

    /// <summary>True when deltas can be made: dictionaries on and libzstd usable.</summary>
    public static bool CanRun(CompressionOptions options) => options.Enabled && options.Dictionaries?.Enabled == true && Zstd.IsAvailable;

    /// <summary>Deltas made and published so far.</summary>
    public long DeltasMade => Interlocked.Read(ref _made);

    /// <summary>The versions kept, and their bytes; read by the worker's thread, approximate elsewhere.</summary>
    public (int Versions, long Bytes) Kept => (_kept.Count, _kept.Bytes);

    /// <summary>Completes when everything posted so far has been handled.</summary>
    public Task WhenIdle()
    {
        lock (_gate)
        {
            return _idle.Task;
        }
    }

    /// <summary>
    /// Takes in a published snapshot, as <see cref="Compressor.OnPublished"/> does: the dictionary
    /// entries it added, oldest first by Last-Modified, then by path (so that, on a first index of
    /// a folder holding several versions, the newest are kept last and dropped last, in an order
    /// every replica of a bucket shares: its Last-Modified is the listing's), and those it dropped.
    /// With a source's history, the kept versions are first set anew from it, between the two.
    /// </summary>
    public void OnPublished(CatalogSnapshot snapshot, CatalogSnapshot? previous, SnapshotDelta? delta)
    {
        IEnumerable<CatalogEntry> added, dropped;
        if (delta is not null)
        {
            added = delta.Added;
            dropped = delta.Removed;
        }
        else
        {
            added = snapshot.Files;
            dropped = previous is null ? [] : previous.Files.Where(entry => !snapshot.Holds(entry));
        }

        foreach (var entry in dropped.Where(e => e.DictionaryMatch is not null))
        {
            Post(new Job(entry, Dropped: true, Earlier: null, InForce: null));
        }

        if (_earlier is not null)
        {
            // The whole snapshot, in one job: the kept versions must not depend on which entries
            // this process happened to reuse from an earlier release.
            Post(new Job(null, Dropped: false, Earlier: _earlier(snapshot.Root) ?? [], InForce: InOrder(snapshot.Files)));
            return;
        }

        foreach (var entry in InOrder(added))
        {
            Post(new Job(entry, Dropped: false, Earlier: null, InForce: null));
        }
    }

    public void Dispose()
    {
        _queue.Writer.TryComplete();
        _stopping.Cancel();
    }

    private void Post(Job job)
    {
        lock (_gate)
        {
            if (_outstanding++ == 0)
            {
                _idle = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
            }
        }

        if (!_queue.Writer.TryWrite(job))
        {
            Done();
        }
    }

    private void Done(int count = 1)
    {
        lock (_gate)
        {
            if ((_outstanding -= count) == 0)
            {
                _idle.TrySetResult();
            }
        }
    }

    private void Work()
    {
        WorkerPriority.LowerCurrentThread();
        var reader = _queue.Reader;
        try
        {
            Restore();
            while (reader.WaitToReadAsync(_stopping.Token).AsTask().GetAwaiter().GetResult())
            {
                var handled = 0;
                while (reader.TryRead(out var item))
                {
                    try
                    {
                        if (item.Earlier is { } earlier)
                        {
                            Reset(earlier, item.InForce!);
                        }
                        else if (item.Dropped)
                        {
                            Drop(item.Entry!);
                        }
                        else
                        {
                            Add(item.Entry!);
                        }
                    }
                    catch (Exception ex) when (ex is not OperationCanceledException)
                    {
                        // The entry keeps its ordinary codings; the next version tries again.
                        CompressionLog.DeltaFailed(_logger, item.Entry?.RelativePath ?? "the earlier versions", ex);
                    }
                    finally
                    {
                        handled++;
                    }
                }

                // Saved once what was posted is handled, before it counts as done.
                Save();
                Done(handled);
            }
        }
        catch (OperationCanceledException)
        {
        }
        finally
        {
            _store?.Dispose();
            _kept.Clear();
            lock (_gate)
            {
                _idle.TrySetResult();
            }
        }
    }

    private static TaskCompletionSource Completed()
    {
        var source = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        source.SetResult();
        return source;
    }

    /// <summary>One thing for the worker: an entry added or dropped, or the kept versions set anew from a source's history.</summary>
    private readonly record struct Job(CatalogEntry? Entry, bool Dropped, IReadOnlyList<KeyValuePair<string, string>>? Earlier, List<CatalogEntry>? InForce);

    private static List<CatalogEntry> InOrder(IEnumerable<CatalogEntry> entries)
        => entries.Where(e => e.DictionaryMatch is not null).OrderBy(e => e.LastModifiedTicks).ThenBy(e => e.RelativePath, StringComparer.Ordinal).ToList();
}
