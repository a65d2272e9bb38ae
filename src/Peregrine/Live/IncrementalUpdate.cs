using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Sources;

namespace Peregrine.Live;

/// <summary>A path under the root (leading slash) that a change event named, and whether the event said it is a folder.</summary>
internal readonly record struct ChangedPath(string Relative, bool IsDirectory);

/// <summary>
/// The file entries a publish brought in and dropped, for the stages that follow the catalog
/// (compression) and for the memory budget: <see langword="null"/> when a whole rescan made the
/// snapshot, and the two snapshots must be compared instead.
/// </summary>
internal sealed record SnapshotDelta(IReadOnlyList<CatalogEntry> Added, IReadOnlyList<CatalogEntry> Removed);

/// <summary>What one incremental update made: the next snapshot (null when nothing changed), and the paths left for later.</summary>
internal readonly record struct UpdateResult(CatalogSnapshot? Next, SnapshotDelta Delta, List<ChangedPath> Deferred, bool NeedsRescan);

/// <summary>
/// Applies change events to a snapshot without scanning the tree: each file an event names is
/// looked at (one lstat(2), then read and hashed), a folder that appeared or moved in is scanned
/// alone, a folder that went away is taken out with everything under it, and the folders that
/// hold a changed path get their own entries (default document, listing, redirect) again. The
/// cost follows the paths changed, not the size of the tree; only a folder removed costs a pass
/// over the index's keys.
/// </summary>
internal sealed class IncrementalUpdate(PeregrineOptions options, MemoryBudget budget, ILogger logger, VersionCopies? copies = null)
{
    private static readonly string[] s_sidecarExtensions = [".br", ".zst", ".gz"];

    private readonly TreeScanner _scanner = new(options, logger);
    private readonly EntryBuilder _entries = new(options, budget, logger, copies);

    /// <summary>
    /// The snapshot after <paramref name="paths"/> changed. A file that changes while it is read,
    /// or for which <paramref name="stillSettled"/> says a writer came back meanwhile, keeps the
    /// version it had and is returned in <see cref="UpdateResult.Deferred"/>.
    /// </summary>
    public UpdateResult Apply(CatalogSnapshot current, IReadOnlyCollection<ChangedPath> paths, Func<string, bool> stillSettled, CancellationToken cancellationToken)
    {
        var deferred = new List<ChangedPath>();
        if (options.CleanUrls)
        {
            // A page's clean alias depends on its neighbours (a file or folder of the clean name
            // wins) and on its folder's default document; CleanUrlEntries decides them over the
            // whole index, so a site with clean URLs takes the full rescan.
            return new UpdateResult(null, new SnapshotDelta([], []), deferred, NeedsRescan: true);
        }

        var mounts = current.Mounts;
        var changes = new Dictionary<string, CatalogEntry?>(StringComparer.Ordinal);
        var folders = new HashSet<string>(StringComparer.Ordinal);
        var files = new List<(string Path, string Physical)>();
        foreach (var change in WithSidecarSources(paths))
        {
            if (!IsServable(change.Relative) || MountTable.Locate(mounts, change.Relative) is not var (mount, physical, facts))
            {
                continue;
            }

            if (facts.Kind == FileKind.Link)
            {
                // Where a link leads is decided against the whole tree (it must stay under the root).
                return Rescan(current, changes, deferred);
            }

            folders.Add(change.Relative[..change.Relative.LastIndexOf('/')]);
            if (change.IsDirectory || facts.Kind == FileKind.Directory)
            {
                if (!ReplaceFolder(current, change.Relative, facts.Kind == FileKind.Directory, changes, cancellationToken))
                {
                    return Rescan(current, changes, deferred);
                }

                continue;
            }

            current.TryFind(change.Relative, out var old);
            old = old is { IsFile: true } && string.Equals(old.RelativePath, change.Relative, StringComparison.Ordinal) ? old : null;
            if (facts.Kind != FileKind.Regular)
            {
                changes[change.Relative] = null;
                continue;
            }

            var name = change.Relative[(change.Relative.LastIndexOf('/') + 1)..];
            var found = new FoundFile(change.Relative, physical, name, facts.Length, facts.LastWriteTicks, mount.Root, mount.UrlPrefix.Length);
            var entry = _entries.BuildOne(found, old, out var settled);
            if (!settled)
            {
                deferred.Add(change);
                continue;
            }

            changes[change.Relative] = entry;
            files.Add((change.Relative, physical));
        }

        // Read, and still nobody writing: a write that began during the read would have been
        // seen by the length and time check, unless it fell in the same clock tick; the watcher's
        // events since the read close that gap, and a last lstat(2) after them catches a write
        // whose event was not queued yet.
        WaitBeforeChecking(files.Count);
        foreach (var (path, physical) in files)
        {
            var entry = changes[path];
            var facts = FileSystemProbe.Probe(physical, followLinks: false);
            var unchanged = entry is null || (facts.Length == entry.Identity.Length && facts.LastWriteTicks == entry.LastWriteTicks);
            if (!stillSettled(path) || !unchanged)
            {
                current.TryFind(path, out var old);
                if (entry is not null && !ReferenceEquals(entry, old))
                {
                    _entries.Discard(entry);
                }

                changes.Remove(path);
                deferred.Add(new ChangedPath(path, false));
            }
        }

        foreach (var folder in folders)
        {
            if (!RecomputeFolder(current, folder, changes))
            {
                return Rescan(current, changes, deferred);
            }
        }

        RouteEntries.Follow(changes, options.Routes);
        var delta = DeltaOf(current, changes);
        var next = delta.Added.Count == 0 && delta.Removed.Count == 0 && changes.All(change => current.TryFind(change.Key, out var old) ? ReferenceEquals(old, change.Value) : change.Value is null)
            ? null
            : current.With(changes);
        return new UpdateResult(next, delta, deferred, NeedsRescan: false);
    }

    /// <summary>
    /// Waits <see cref="SettleMargin"/> after the reads before they are checked against the
    /// watcher's events. A truncation (a writer opening with O_TRUNC) sets the new length, frees
    /// the old blocks and only then sets the new time and queues its event: an empty file read in
    /// between holds still and carries the old time, and only the event, a moment later, tells
    /// it from a version.
    /// </summary>
    private static void WaitBeforeChecking(int files)
    {
        if (files > 0)
        {
            Thread.Sleep(SettleMargin);
        }
    }

    /// <summary>
    /// How long after its read a file is checked against the watcher's events: well over the
    /// time a truncation takes between setting the length and queueing its event (under a
    /// millisecond for a few MB on ext4), and a small part of the time a change takes to show.
    /// </summary>
    internal static readonly TimeSpan SettleMargin = TimeSpan.FromMilliseconds(25);

    /// <summary>The paths, and for a sidecar (<c>app.js.br</c>) the file it belongs to, whose variants it may replace.</summary>
    private static IEnumerable<ChangedPath> WithSidecarSources(IReadOnlyCollection<ChangedPath> paths)
    {
        var seen = new HashSet<string>(StringComparer.Ordinal);
        foreach (var change in paths)
        {
            if (seen.Add(change.Relative))
            {
                yield return change;
            }

            foreach (var extension in s_sidecarExtensions)
            {
                if (!change.IsDirectory && change.Relative.EndsWith(extension, StringComparison.Ordinal) && seen.Add(change.Relative[..^extension.Length]))
                {
                    yield return new ChangedPath(change.Relative[..^extension.Length], false);
                }
            }
        }
    }

    private bool IsServable(string relative)
    {
        if (options.ServeHiddenFiles)
        {
            return true;
        }

        foreach (var range in relative.AsSpan().Split('/'))
        {
            var segment = relative.AsSpan()[range];
            if (segment.Length > 0 && segment[0] == '.' && !segment.SequenceEqual(".well-known"))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// Takes out everything under a folder that went or moved away, and takes in what is under it
    /// now, if it exists. False when the folder is overlaid (another mount adds to it, or is
    /// mounted under it): a whole rescan then rebuilds it.
    /// </summary>
    private bool ReplaceFolder(CatalogSnapshot current, string folder, bool exists, Dictionary<string, CatalogEntry?> changes, CancellationToken cancellationToken)
    {
        var holder = MountTable.SoleHolderOf(current.Mounts, folder);
        if (current.Mounts.Length > 1 && (exists ? holder is null : MountTable.HasMountUnder(current.Mounts, folder)))
        {
            return false;
        }

        var prefix = folder + "/";
        foreach (var (key, _) in current.Pairs)
        {
            if (key.StartsWith(prefix, StringComparison.Ordinal) || string.Equals(key, folder, StringComparison.Ordinal))
            {
                changes[key] = null;
            }
        }

        if (!exists || holder is null)
        {
            return true;
        }

        var tree = holder.ToUrls(_scanner.Scan(holder.Root, holder.RelativeOf(folder), cancellationToken));
        var entries = new Dictionary<string, CatalogEntry>(StringComparer.Ordinal);
        foreach (var entry in _entries.Build(tree.Files, current, cancellationToken))
        {
            if (entry is not null)
            {
                entries[entry.RelativePath] = entry;
            }
        }

        DirectoryEntries.Add(entries, tree.Directories, options);
        foreach (var (key, entry) in entries)
        {
            changes[key] = entry;
        }

        return true;
    }

    /// <summary>
    /// A folder's own entries (default document at <c>/folder/</c>, or its listing, and the
    /// redirect) from its files as they are now; nothing for a folder no mount holds. False when
    /// a listing would have to overlay several mounts: a whole rescan then rebuilds it.
    /// </summary>
    private bool RecomputeFolder(CatalogSnapshot current, string folder, Dictionary<string, CatalogEntry?> changes)
    {
        CatalogEntry? Find(string path)
        {
            var entry = changes.TryGetValue(path, out var changed) ? changed : current.TryFind(path, out var found) ? found : null;
            return entry is { IsFile: true } && string.Equals(entry.RelativePath, path, StringComparison.Ordinal) ? entry : null;
        }

        if (!MountTable.HoldsFolder(current.Mounts, folder))
        {
            return true;
        }

        var entries = new Dictionary<string, CatalogEntry>(StringComparer.Ordinal);
        List<FoundDirectory> directories;
        if (options.DirectoryListing)
        {
            if (MountTable.SoleHolderOf(current.Mounts, folder) is not { } holder)
            {
                return false;
            }

            var scanned = holder.ToUrls(_scanner.ScanFolder(holder.Root, holder.RelativeOf(folder)));
            foreach (var file in scanned.Files)
            {
                if (Find(file.Relative) is { } entry)
                {
                    entries[file.Relative] = entry;
                }
            }

            directories = scanned.Directories;
        }
        else
        {
            foreach (var document in options.DefaultDocuments)
            {
                if (Find(folder + "/" + document) is { } entry)
                {
                    entries[entry.RelativePath] = entry;
                }
            }

            directories = [new FoundDirectory(folder, default)];
        }

        DirectoryEntries.Add(entries, directories, options);
        changes[folder + "/"] = entries.GetValueOrDefault(folder + "/");
        changes[folder] = entries.GetValueOrDefault(folder);
        return true;
    }

    /// <summary>
    /// Nothing of what was built is published: its memory and copies are given back, and the
    /// caller asks for a whole rescan.
    /// </summary>
    private UpdateResult Rescan(CatalogSnapshot current, Dictionary<string, CatalogEntry?> changes, List<ChangedPath> deferred)
    {
        foreach (var built in DeltaOf(current, changes).Added)
        {
            _entries.Discard(built);
        }

        return new UpdateResult(null, new SnapshotDelta([], []), deferred, NeedsRescan: true);
    }

    /// <summary>The file entries the changes bring in and drop.</summary>
    private static SnapshotDelta DeltaOf(CatalogSnapshot current, Dictionary<string, CatalogEntry?> changes)
    {
        var added = new List<CatalogEntry>();
        var removed = new List<CatalogEntry>();
        foreach (var (path, entry) in changes)
        {
            current.TryFind(path, out var old);
            if (ReferenceEquals(old, entry))
            {
                continue;
            }

            if (old is { IsFile: true } && string.Equals(old.RelativePath, path, StringComparison.Ordinal))
            {
                removed.Add(old);
            }

            if (entry is { IsFile: true } && string.Equals(entry.RelativePath, path, StringComparison.Ordinal))
            {
                added.Add(entry);
            }
        }

        return new SnapshotDelta(added, removed);
    }
}
