using System.Diagnostics;
using Peregrine.Indexing;
using Peregrine.Logging;

namespace Peregrine.Live;

/// <summary>
/// The publisher's changes: a watcher's batch or posted paths applied to the snapshot in force
/// (through <see cref="IncrementalUpdate"/>, as URL paths under each folder's mount) and the
/// result published.
/// </summary>
internal sealed partial class FileCatalog
{
    /// <summary>
    /// Applies posted paths, or a watcher's batch; the paths of a batch left at their previous
    /// version go back to their watcher, which waits for their writer again.
    /// </summary>
    private void TakeIn(IndexChange change)
    {
        if (change.Watcher is not { } watcher)
        {
            ApplyChanges(change.Root!, change.Paths!, static _ => true);
            return;
        }

        // A watcher replaced since it posted (its root is no longer watched) gives an empty batch:
        // the rescan that came with its replacement took in what it had.
        using var check = watcher.TakeBatch();
        if (check.Batch.Count == 0)
        {
            return;
        }

        var deferred = ApplyChanges(watcher.Root, check.Batch, check.StillSettled);
        if (deferred.Count > 0)
        {
            watcher.Defer(deferred);
        }
    }

    /// <summary>
    /// Applies change events to the snapshot in force and publishes the result (see
    /// <see cref="IncrementalUpdate"/>); a tree with links, or a change the events cannot
    /// describe, asks for a whole rescan instead. Returns the paths left at their previous
    /// version because they were still being written. <paramref name="root"/> is the root the
    /// events came from: events from a root no longer in force are dropped. On the publisher.
    /// </summary>
    private IReadOnlyList<ChangedPath> ApplyChanges(string root, IReadOnlyCollection<ChangedPath> paths, Func<string, bool> stillSettled)
    {
        // The publisher takes changes in only once the first index is in force.
        var current = _current!;
        if (current.Mounts.Length > 1)
        {
            return ApplyMountedChanges(current, root, paths, stillSettled);
        }

        if (current.Root != root)
        {
            return [];
        }

        return ApplyUrlChanges(current, root, paths, stillSettled);
    }

    /// <summary>Applies changed URL paths to <paramref name="current"/> and publishes the result; the paths left for later.</summary>
    private IReadOnlyList<ChangedPath> ApplyUrlChanges(CatalogSnapshot current, string root, IReadOnlyCollection<ChangedPath> paths, Func<string, bool> stillSettled)
    {
        if (current.HasLinks)
        {
            RequestRefresh();
            return [];
        }

        var started = Stopwatch.GetTimestamp();
        UpdateResult result;
        try
        {
            result = _update.Apply(current, paths, stillSettled, _stopping.Token);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // A folder vanished while it was scanned: the rescan sorts it out.
            RequestRefresh();
            return [];
        }

        if (result.NeedsRescan)
        {
            RequestRefresh();
            return [];
        }

        if (result.Next is { } next)
        {
            Publish(next, result.Delta);
            ReleaseDropped(result.Delta.Removed);
        }

        PeregrineLog.Updated(_logger, paths.Count, root, Stopwatch.GetElapsedTime(started).TotalMilliseconds, result.Deferred.Count);
        return result.Deferred;
    }

    /// <summary>
    /// <see cref="ApplyChanges"/> for an index of several folders: the paths under the folder
    /// <paramref name="root"/> become the URL paths of each mount of that folder, and the paths
    /// left for later go back to the watcher as its own.
    /// </summary>
    private IReadOnlyList<ChangedPath> ApplyMountedChanges(CatalogSnapshot current, string root, IReadOnlyCollection<ChangedPath> paths, Func<string, bool> stillSettled)
    {
        var urls = new List<ChangedPath>(paths.Count);
        var folderPaths = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var mount in current.Mounts)
        {
            if (mount.Root != root)
            {
                continue;
            }

            foreach (var change in paths)
            {
                if (change.IsDirectory || mount.AllowsFile(change.Relative) || mount.AllowsFolder(change.Relative))
                {
                    var url = mount.UrlPrefix + change.Relative;
                    if (folderPaths.TryAdd(url, change.Relative))
                    {
                        urls.Add(change with { Relative = url });
                    }
                }
            }
        }

        if (urls.Count == 0)
        {
            // From a folder no longer indexed: the rescan that replaced it took in what it had.
            return [];
        }

        var deferred = ApplyUrlChanges(current, root, urls, url => stillSettled(folderPaths[url]));
        var back = new Dictionary<string, ChangedPath>(StringComparer.Ordinal);
        foreach (var change in deferred)
        {
            var relative = folderPaths.GetValueOrDefault(change.Relative, change.Relative);
            back.TryAdd(relative, change with { Relative = relative });
        }

        return [.. back.Values];
    }
}
