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
internal sealed class DeltaMaker : IDisposable
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

    /// <summary>
    /// Keeps the versions saved before a restart, oldest first, before the first snapshot's
    /// entries are taken in: those still in force are found kept, and a deploy after the
    /// restart gets deltas against the versions served before it.
    /// </summary>
    private void Restore()
    {
        try
        {
            if (_store is not null)
            {
                foreach (var (match, sha256, content) in _store.Load(_options.MaxBytes))
                {
                    _kept.Keep(match, sha256, content);
                }

                _savedGeneration = _kept.Generation;
            }
        }
        finally
        {
            Done();
        }
    }

    private void Save()
    {
        if (_store is not null && _kept.Generation != _savedGeneration)
        {
            _store.Save(_kept.OldestFirst);
            _savedGeneration = _kept.Generation;
        }
    }

    private void Add(CatalogEntry entry)
    {
        var match = entry.DictionaryMatch!;
        if (_hashes.ContainsKey(entry) || Content(entry) is not { } content)
        {
            return;
        }

        var hash = new byte[32];
        ContentHash.HashData(content, hash);
        _hashes[entry] = hash;
        if (!_inForce.TryGetValue(match, out var entries))
        {
            entries = [];
            _inForce[match] = entries;
        }

        entries.Add(entry);
        _kept.Keep(match, hash, content);

        // Every version in force gets its deltas against the versions kept now: the new one
        // against the old, and (for a rollback) the old ones in force against the new.
        foreach (var version in entries)
        {
            Refresh(version, content: ReferenceEquals(version, entry) ? content : null);
        }
    }

    /// <summary>
    /// Sets the kept versions anew from a source's history: <paramref name="earlier"/> oldest
    /// first, then the files in force (by Last-Modified, then path), then the deltas of every file
    /// in force against them. What the process kept before goes, so that two replicas that
    /// started at different times, or saw different releases come and go, keep the same versions
    /// and so make the same deltas (zstd's output is a function of its input and parameters).
    /// </summary>
    private void Reset(IReadOnlyList<KeyValuePair<string, string>> earlier, List<CatalogEntry> inForce)
    {
        _kept.Clear();
        foreach (var (path, file) in earlier)
        {
            if (DictionaryMatch.For(_requestPath, path) is not { } match)
            {
                continue;
            }

            try
            {
                if (new FileInfo(file).Length <= _options.MaxBytes)
                {
                    var bytes = File.ReadAllBytes(file);
                    var hash = new byte[32];
                    ContentHash.HashData(bytes, hash);
                    _kept.Keep(match, hash, bytes);
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Removed by a later release meanwhile: that release's reset follows.
            }
        }

        foreach (var entry in inForce)
        {
            if (Content(entry) is not { } content)
            {
                continue;
            }

            if (!_hashes.TryGetValue(entry, out var hash))
            {
                hash = new byte[32];
                ContentHash.HashData(content, hash);
                _hashes[entry] = hash;
                if (!_inForce.TryGetValue(entry.DictionaryMatch!, out var entries))
                {
                    entries = [];
                    _inForce[entry.DictionaryMatch!] = entries;
                }

                entries.Add(entry);
            }

            _kept.Keep(entry.DictionaryMatch!, hash, content);
        }

        foreach (var entry in inForce)
        {
            if (_hashes.ContainsKey(entry))
            {
                Refresh(entry, content: null);
            }
        }
    }

    private void Drop(CatalogEntry entry)
    {
        if (!_hashes.Remove(entry))
        {
            return;
        }

        var match = entry.DictionaryMatch!;
        if (_inForce.TryGetValue(match, out var entries))
        {
            entries.Remove(entry);
            if (entries.Count == 0)
            {
                _inForce.Remove(match);
            }
        }

        // The version itself stays kept: it is the dictionary the next version is sent against.
        Release(entry.MadeDeltas);
    }

    /// <summary>
    /// Publishes on <paramref name="entry"/> its deltas against every kept version of its asset
    /// but its own: those it has are kept, missing ones made, those against versions no longer
    /// kept dropped. Nothing is published when nothing changed. An entry whose own version is
    /// no longer kept (a folder that holds many old builds) gets none: it is not one of the
    /// recent versions a browser is likely to ask for, and this bounds the deltas of an asset
    /// to MaxVersions × (MaxVersions − 1) however many old files stay in the folder.
    /// </summary>
    private void Refresh(CatalogEntry entry, byte[]? content)
    {
        var own = _hashes[entry];
        var current = entry.MadeDeltas;
        var deltas = new List<(byte[] DictionaryHash, Representation Delta)>();
        var changed = false;
        var versions = _kept.Of(entry.DictionaryMatch!);
        if (!versions.Any(version => version.Sha256.AsSpan().SequenceEqual(own)))
        {
            versions = [];
        }

        foreach (var version in versions)
        {
            _stopping.Token.ThrowIfCancellationRequested();
            if (version.Sha256.AsSpan().SequenceEqual(own))
            {
                continue;
            }

            foreach (var coding in (ReadOnlySpan<ContentCoding>)[ContentCoding.Dcz, ContentCoding.Dcb])
            {
                if (coding == ContentCoding.Dcb && !BrotliDictionary.IsAvailable)
                {
                    continue;
                }

                if (current?.Find(version.Sha256, dcz: coding == ContentCoding.Dcz, dcb: coding == ContentCoding.Dcb) is { } existing)
                {
                    deltas.Add((version.Sha256, existing));
                    continue;
                }

                content ??= Content(entry);
                if (content is null)
                {
                    return;
                }

                if (Make(entry, content, version, coding) is { } made)
                {
                    deltas.Add((version.Sha256, made));
                    changed = true;
                }
            }
        }

        if (!changed && deltas.Count == (current?.Count ?? 0))
        {
            return;
        }

        entry.PublishDeltas(deltas.Count == 0 ? null : new DictionaryDeltas(deltas));
        if (current is not null)
        {
            foreach (var old in current.Deltas)
            {
                if (!deltas.Exists(d => ReferenceEquals(d.Delta, old)))
                {
                    _budget.Release(old.Length);
                }
            }
        }
    }

    /// <summary>
    /// The delta of <paramref name="content"/> against <paramref name="dictionary"/> in
    /// <paramref name="coding"/> (dcz, or dcb where brotli 1.1 is linked in), checked by decoding
    /// it; null when it saves nothing, does not decode, or finds no room in the budget.
    /// </summary>
    private Representation? Make(CatalogEntry entry, byte[] content, KeptVersions.Version dictionary, ContentCoding coding)
    {
        var delta = coding == ContentCoding.Dcb
            ? BrotliDictionary.Compress(content, dictionary.Content, dictionary.Sha256)
            : Zstd.CompressDcz(content, dictionary.Content, dictionary.Sha256);
        if (delta.Length >= content.Length)
        {
            return null;
        }

        var decodes = coding == ContentCoding.Dcb
            ? BrotliDictionary.DecodesTo(delta, dictionary.Content, dictionary.Sha256, content)
            : Zstd.DczDecodesTo(delta, dictionary.Content, dictionary.Sha256, content);
        if (!decodes)
        {
            CompressionLog.DeltaInvalid(_logger, entry.RelativePath);
            return null;
        }

        if (!_budget.TryReserve(delta.Length))
        {
            return null;
        }

        Interlocked.Increment(ref _made);
        return new Representation(coding, delta.Length, EntityTag.Compute(delta), delta, physicalPath: null);
    }

    private void Release(DictionaryDeltas? deltas)
    {
        if (deltas is null)
        {
            return;
        }

        foreach (var delta in deltas.Deltas)
        {
            _budget.Release(delta.Length);
        }
    }

    /// <summary>
    /// The entry's bytes: those it holds, or read from the file it is served from, and then
    /// only while they are still the indexed ones (same length, same tag). Null for a file
    /// larger than <see cref="DictionaryOptions.MaxBytes"/>, one too large to hash at index time
    /// (its tag is made from its length and time, never equal to a content tag), or one that
    /// changed.
    /// </summary>
    private byte[]? Content(CatalogEntry entry)
    {
        var identity = entry.Identity;
        if (identity.Length > _options.MaxBytes)
        {
            return null;
        }

        if (identity.Content is { } held)
        {
            return held;
        }

        if (identity.PhysicalPath is not { } path)
        {
            return null;
        }

        try
        {
            var bytes = File.ReadAllBytes(path);
            return bytes.Length == identity.Length && EntityTag.Compute(bytes) == identity.ContentTag ? bytes : null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Gone or unreadable: this version gets no deltas and is not kept.
            return null;
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
