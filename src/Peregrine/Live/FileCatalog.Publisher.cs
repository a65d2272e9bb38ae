using System.Diagnostics;
using System.Threading.Channels;
using Peregrine.Indexing;
using Peregrine.Logging;
using Peregrine.Sources;

namespace Peregrine.Live;

/// <summary>
/// The publisher: the one thread that makes and publishes every snapshot (see the class's
/// remarks): its loop and its whole rescans. What it does with changed paths is FileCatalog.Changes.
/// </summary>
internal sealed partial class FileCatalog
{
    private void RunPublisher()
    {
        if (_options.Watch.Enabled)
        {
            // Watching starts before the first index, so a file written while it is being
            // built is not missed: its event asks for a rebuild straight after.
            _watcher = new CatalogWatcher(this, _options, _logger);
            _watcher.Watch(FoldersToWatch());
        }

        try
        {
            var first = new CatalogBuilder(_options, Budget, _logger, _copies).Build(cancellationToken: _stopping.Token);
            if (first.Count >= LargeTree)
            {
                // The scan of a large tree leaves its scratch (directory entries, path strings, the
                // build's dictionary) in the heap, and the GC keeps that memory committed, far
                // above what the snapshot holds live. One compacting collection before the first
                // request gives most of it back and packs the entries together, for a slightly
                // later first response, once, while requests wait for the index anyway
                // (docs/performance.md, "Large trees").
                GC.Collect(2, GCCollectionMode.Aggressive, blocking: true, compacting: true);
            }

            Publish(first, null);
            _ready.TrySetResult();
        }
        catch (Exception ex)
        {
            // Kept as the Ready fault: requests then answer 503 rather than hang. Stopped before
            // the first index was done (start-up failed elsewhere, a port in use say), nothing
            // failed here, and the log would only bury the real reason under a stack trace.
            if (ex is not OperationCanceledException || !_stopping.IsCancellationRequested)
            {
                PeregrineLog.IndexFailed(_logger, _options.Root, ex);
            }

            _ready.TrySetException(ex);

            // Nothing will take in what a watcher posts from now on.
            _watcher?.Dispose();
            return;
        }

        if (_watcher is null)
        {
            return;
        }

        _watcher.Retarget(_current!);
        var changes = _changes.Reader;
        try
        {
            while (true)
            {
                try
                {
                    if (_lookAgainAt != 0 && Stopwatch.GetTimestamp() >= _lookAgainAt)
                    {
                        // A look the publisher asked of itself: no burst of events to wait out.
                        Rescan();
                        continue;
                    }

                    if (!changes.TryRead(out var change))
                    {
                        if (!WaitForChange(changes))
                        {
                            return;
                        }

                        continue;
                    }

                    if (change.Root is null)
                    {
                        // Taken in already by a rescan that began after it was asked for (a look
                        // of the publisher's own).
                        if (Volatile.Read(ref _refreshPending) == 0)
                        {
                            continue;
                        }

                        // A burst of rescan requests settles into one rescan.
                        if (_stopping.Token.WaitHandle.WaitOne(_options.Watch.CoalescingDelay))
                        {
                            return;
                        }

                        Rescan();
                    }
                    else
                    {
                        TakeIn(change);
                    }
                }
                catch (Exception ex) when (ex is not OperationCanceledException || !_stopping.IsCancellationRequested)
                {
                    // Whatever a change could not be taken in for (a file the system reports oddly,
                    // a subscriber that failed), the publisher lives on, serving the snapshot in
                    // force, and a rescan shortly tries again.
                    PeregrineLog.RebuildFailed(_logger, _options.Root, ex.Message);
                    LookAgainAfter(TimeSpan.FromSeconds(1));
                }
            }
        }
        catch (OperationCanceledException)
        {
        }
    }

    /// <summary>
    /// Blocks the publisher (it has nothing else to do) until a change is posted or its own look
    /// is due; false once the channel is closed. The wait ends on the publisher's own thread,
    /// with no timer or thread-pool thread between: a busy pool cannot hold back a look.
    /// </summary>
    private bool WaitForChange(ChannelReader<IndexChange> changes)
    {
        // One wait at a time on the channel: one that ended at the look's time is taken up again.
        var waiting = _waiting ??= changes.WaitToReadAsync().AsTask();
        if (_lookAgainAt is var due and not 0)
        {
            var left = Math.Max(Stopwatch.GetElapsedTime(Stopwatch.GetTimestamp(), due).TotalMilliseconds, 0);
            if (!waiting.Wait((int)Math.Ceiling(Math.Min(left, int.MaxValue))))
            {
                return true;
            }
        }

        _waiting = null;
        return waiting.GetAwaiter().GetResult();
    }

    /// <summary>A whole rescan, now: what was asked for until this moment is taken in by it.</summary>
    private void Rescan()
    {
        _rescanning = true;
        Interlocked.Exchange(ref _refreshPending, 0);
        try
        {
            Rebuild();
        }
        finally
        {
            _rescanning = false;
        }
    }

    /// <summary>Has the publisher rescan by itself after <paramref name="delay"/>, or sooner if it was to already.</summary>
    private void LookAgainAfter(TimeSpan delay)
    {
        var due = Stopwatch.GetTimestamp() + (long)(delay.TotalSeconds * Stopwatch.Frequency);
        _lookAgainAt = _lookAgainAt == 0 ? due : Math.Min(_lookAgainAt, due);
    }

    private void Rebuild()
    {
        // This rescan takes in whatever a look asked for was to find.
        _lookAgainAt = 0;
        var previous = _current!;
        CatalogSnapshot next;
        var builder = new CatalogBuilder(_options, Budget, _logger, _copies);
        var unsettledSince = _unsettledSince;
        _unsettledSince = new(StringComparer.Ordinal);
        _settlesAt = long.MaxValue;
        try
        {
            next = builder.Build(previous, _stopping.Token, file => IsUnsettled(file, unsettledSince));
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            // The root is missing or unreadable for the moment (between the two renames of a
            // deploy), or a file vanished mid-scan: keep serving the last good snapshot and try
            // again shortly, so that a change is never left unindexed for want of an event.
            PeregrineLog.RebuildFailed(_logger, _options.Root, ex.Message);
            LookAgainAfter(TimeSpan.FromSeconds(1));
            return;
        }

        if (builder.Unsettled > 0)
        {
            // Files still being written kept their previous version: look again when the first of
            // them will have held still for the settle time (the settle time from now when only
            // a writer, or a read that saw the file change, held one back).
            var settlesIn = _settlesAt == long.MaxValue ? _options.Watch.SettleTime : TimeSpan.FromTicks(_settlesAt - DateTime.UtcNow.Ticks);
            LookAgainAfter(settlesIn < MinimumLook ? MinimumLook : settlesIn);
        }

        Publish(next, null);
        foreach (var mount in next.Mounts)
        {
            if (!Array.Exists(previous.Mounts, old => old.SameAs(mount)))
            {
                PeregrineLog.RootReplaced(_logger, mount.ConfiguredRoot, mount.Root);
            }
        }

        _watcher?.Retarget(next);
        ReleaseDropped(previous.Files.Where(entry => !next.Holds(entry)));
    }

    /// <summary>
    /// For a rescan: true when a changed file is not to be taken yet, because the watcher knows a
    /// writer is at it, or its modification time is within
    /// <see cref="WatchOptions.SettleTime"/> of now: the settle rule. A file that rescans have
    /// found unsettled for longer than <see cref="WatchOptions.OpenWriteLimit"/> is taken as it
    /// stands, as the inotify watcher takes a file a writer holds open that long: without close
    /// events (the portable parts), a log written without a pause would otherwise never be served.
    /// <paramref name="unsettledSince"/> holds when the rescans before this one first found each
    /// file unsettled; this one carries over those it finds unsettled still. Called in parallel.
    /// </summary>
    private bool IsUnsettled(FoundFile file, Dictionary<string, long> unsettledSince)
    {
        if (IsBeingWritten(file.Relative))
        {
            // Its writer's close brings it (with close events), else the look a settle time on.
            return true;
        }

        // Also with close events: during a rescan the watcher's view may lag the disk.
        var now = DateTime.UtcNow.Ticks;
        var modified = FileSystemProbe.Probe(file.Physical).LastWriteTicks;
        if (now - modified >= _options.Watch.SettleTime.Ticks)
        {
            return false;
        }

        var since = unsettledSince.GetValueOrDefault(file.Physical, now);
        if (now - since >= _options.Watch.OpenWriteLimit.Ticks)
        {
            return false;
        }

        lock (_unsettledSince)
        {
            _unsettledSince[file.Physical] = since;

            // When this file is to be taken if nothing touches it again: once it has held still
            // for the settle time, or has been found unsettled for the open-write limit.
            _settlesAt = Math.Min(_settlesAt, Math.Min(modified + _options.Watch.SettleTime.Ticks, since + _options.Watch.OpenWriteLimit.Ticks));
        }

        return true;
    }

    /// <summary>The folders to watch before the first index: the root and each mount's folder, those that exist.</summary>
    private IEnumerable<string> FoldersToWatch()
    {
        foreach (var folder in _options.Mounts.Select(mount => mount.Root).Prepend(_options.Root))
        {
            if (FileSystemProbe.RealPath(Path.GetFullPath(folder)) is { } resolved)
            {
                yield return resolved;
            }
        }
    }

    /// <summary>
    /// The shortest wait before a look the publisher asks of itself: a file that settled while
    /// the rescan ran is taken at once, and one whose clock runs ahead cannot spin the publisher.
    /// </summary>
    private static readonly TimeSpan MinimumLook = TimeSpan.FromMilliseconds(10);
}
