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
/// add clean URLs when they are on (<see cref="CleanUrlEntries"/>), then freeze the index.
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
    public CatalogSnapshot Build(CatalogSnapshot? previous = null, CancellationToken cancellationToken = default, Func<string, bool>? isBeingWritten = null)
    {
        var stopwatch = Stopwatch.StartNew();
        var root = FileSystemProbe.RealPath(Path.GetFullPath(options.Root))
            ?? throw new DirectoryNotFoundException($"The root '{options.Root}' does not exist.");
        var identity = FileSystemProbe.IdentityOf(root);

        var (files, directories) = _scanner.Scan(root, cancellationToken);
        var entries = new Dictionary<string, CatalogEntry>(files.Count + directories.Count * 2, StringComparer.Ordinal);
        var built = _entries.Build(files, root, previous, cancellationToken, isBeingWritten);
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

        var snapshot = new CatalogSnapshot(entries, fileCount, cachedBytes, root, identity);
        PeregrineLog.Indexed(logger, fileCount, totalBytes, cachedBytes, root, stopwatch.ElapsedMilliseconds);
        return snapshot;
    }
}
