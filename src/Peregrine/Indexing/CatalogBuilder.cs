using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Peregrine.Logging;
using Peregrine.Sources;

namespace Peregrine.Indexing;

/// <summary>
/// Builds a snapshot of the root, one step after another: scan (<see cref="TreeScanner"/>:
/// walk the tree, refusing hidden names and links that leave the root), build entries
/// (<see cref="EntryBuilder"/>: content type, content-hash ETag, cached bytes, header values),
/// add the folders (<see cref="DirectoryEntries"/>: index documents, listings, redirects),
/// add clean URLs when they are on (<see cref="CleanUrlEntries"/>), add the static web assets
/// routes (<see cref="RouteEntries"/>), then freeze the index.
/// Only files found here can ever be served, so no request path is ever handed to the file
/// system.
/// </summary>
internal sealed class CatalogBuilder(PeregrineOptions options, MemoryBudget budget, ILogger logger, VersionCopies? copies = null)
{
    private readonly TreeScanner _scanner = new(options, logger);
    private readonly EntryBuilder _entries = new(options, budget, logger, copies);

    /// <summary>Files the last build kept at their earlier version (or left out) because they were still being written.</summary>
    public int Unsettled { get; private set; }

    /// <summary>
    /// Builds a snapshot. Entries of <paramref name="previous"/> whose file has the same path,
    /// length and modification time are reused as they are (bytes, tags and variants), so a
    /// rebuild after a change reads and hashes only what changed.
    /// </summary>
    public CatalogSnapshot Build(CatalogSnapshot? previous = null, CancellationToken cancellationToken = default, Func<FoundFile, bool>? isBeingWritten = null)
    {
        var stopwatch = Stopwatch.StartNew();
        var mounts = MountTable.Resolve(options);
        var root = MountTable.RootOf(mounts).Root;
        var (files, directories) = Scan(mounts, cancellationToken);
        var entries = new Dictionary<string, CatalogEntry>(files.Count + directories.Count * 2, StringComparer.Ordinal);
        var built = _entries.Build(files, previous, cancellationToken, isBeingWritten);
        Unsettled = _entries.Unsettled;

        long totalBytes = 0, cachedBytes = 0;
        foreach (var entry in built)
        {
            if (entry is null)
            {
                continue;
            }

            entries[entry.RelativePath] = entry;
            totalBytes += entry.Identity.Length;
            cachedBytes += entry.Identity.Content?.Length ?? 0;
        }

        var fileCount = entries.Count;
        DirectoryEntries.Add(entries, directories, options);
        if (options.CleanUrls)
        {
            CleanUrlEntries.Add(entries, options);
        }

        RouteEntries.Add(entries, options.Routes);

        var snapshot = new CatalogSnapshot(entries, fileCount, cachedBytes, mounts);
        PeregrineLog.Indexed(logger, fileCount, totalBytes, cachedBytes, root, stopwatch.ElapsedMilliseconds);
        return snapshot;
    }

    /// <summary>
    /// The files and folders of every mount as URL paths, overlaid: a path two folders hold is
    /// taken from the first in <paramref name="mounts"/>' order, and the folders above a mount's
    /// URL path (<c>/a</c> for a mount at <c>/a/b</c>) are added so that the site's tree holds it.
    /// </summary>
    private ScannedTree Scan(Mount[] mounts, CancellationToken cancellationToken)
    {
        if (mounts.Length == 1)
        {
            return _scanner.Scan(mounts[0].Root, cancellationToken);
        }

        var files = new List<FoundFile>();
        var directories = new List<FoundDirectory>();

        // Each URL path once, the first mount's: true for a file, false for a folder.
        var taken = new Dictionary<string, bool>(StringComparer.Ordinal);
        foreach (var mount in mounts)
        {
            var tree = mount.ToUrls(_scanner.Scan(mount.Root, cancellationToken));
            foreach (var file in tree.Files)
            {
                if (taken.TryAdd(file.Relative, true))
                {
                    files.Add(file);
                }
            }

            foreach (var directory in tree.Directories)
            {
                if (taken.TryAdd(directory.Relative, false))
                {
                    directories.Add(directory);
                }
            }
        }

        foreach (var (folder, by) in MountTable.ImpliedFolders(mounts))
        {
            if (taken.TryAdd(folder, false))
            {
                // Listed with the time of the folder mounted below it.
                directories.Add(new FoundDirectory(folder, Directory.GetLastWriteTimeUtc(by.Root)));
            }
        }

        // The site's root folder first, as a scan of one folder gives it.
        var rootFolder = directories.FindIndex(directory => directory.Relative.Length == 0);
        if (rootFolder > 0)
        {
            (directories[0], directories[rootFolder]) = (directories[rootFolder], directories[0]);
        }

        return new ScannedTree(files, directories);
    }
}
