using System.Diagnostics;
using System.Runtime.InteropServices;
using Microsoft.Extensions.Logging;

namespace Peregrine.Catalog;

/// <summary>
/// Builds a snapshot of the root: scan (walk the tree, refusing hidden names and links that
/// leave the root), then build entries (content type, content-hash ETag, cached bytes, header
/// values), then freeze the index. Only files found here can ever be served, so no request
/// path is ever handed to the file system.
/// </summary>
internal sealed class CatalogBuilder
{
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly ContentTypeMap _contentTypes;

    private readonly MemoryBudget _budget;

    public CatalogBuilder(PeregrineOptions options, MemoryBudget budget, ILogger logger)
    {
        _options = options;
        _budget = budget;
        _logger = logger;
        _contentTypes = new ContentTypeMap(options);
        _cachePolicy = new CachePolicy(options);
    }

    private readonly CachePolicy _cachePolicy;

    /// <summary>
    /// Builds a snapshot. Entries of <paramref name="previous"/> whose file has the same path,
    /// length and modification time are reused as they are (bytes, tags and variants), so a
    /// rebuild after a change reads and hashes only what changed.
    /// </summary>
    public CatalogSnapshot Build(CatalogSnapshot? previous = null, CancellationToken cancellationToken = default)
    {
        var stopwatch = Stopwatch.StartNew();
        var root = FileSystemProbe.RealPath(Path.GetFullPath(_options.Root))
            ?? throw new DirectoryNotFoundException($"The root '{_options.Root}' does not exist.");
        var identity = FileSystemProbe.IdentityOf(root);

        var (files, directories) = Scan(root, cancellationToken);
        var entries = new Dictionary<string, CatalogEntry>(files.Count + directories.Count * 2, StringComparer.Ordinal);
        var built = BuildFiles(files, root, previous, cancellationToken);

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
        AddDirectories(entries, directories);

        var snapshot = new CatalogSnapshot(entries, fileCount, cachedBytes, root, identity);
        PeregrineLog.Indexed(_logger, fileCount, totalBytes, cachedBytes, root, stopwatch.ElapsedMilliseconds);
        return snapshot;
    }

    private (List<FoundFile> Files, List<FoundDirectory> Directories) Scan(string root, CancellationToken cancellationToken)
    {
        var files = new List<FoundFile>();
        var directories = new List<FoundDirectory>();
        var visited = new HashSet<string>(StringComparer.Ordinal) { root };
        var rootPrefix = root.EndsWith(Path.DirectorySeparatorChar) ? root : root + Path.DirectorySeparatorChar;
        var level = new List<(string Physical, string Relative, DateTime LastWrite)> { (root, "", Directory.GetLastWriteTimeUtc(root)) };

        // Level by level: the folders of one level are read in parallel (a scan is mostly
        // getdents and stat calls, each waiting in the kernel), and the next level is collected
        // in a fixed order, so which of two links to one folder is walked does not depend on
        // thread timing: the shallower path, then the first in folder order.
        while (level.Count > 0)
        {
            var found = new FoundInDirectory[level.Count];
            try
            {
                Parallel.For(
                    0,
                    level.Count,
                    new ParallelOptions { CancellationToken = cancellationToken, MaxDegreeOfParallelism = Environment.ProcessorCount },
                    i => found[i] = ScanDirectory(level[i].Physical, level[i].Relative, rootPrefix));
            }
            catch (AggregateException ex) when (ex.InnerExceptions.Count > 0)
            {
                // A folder that vanished mid-scan fails the build as it did when read in turn,
                // with its own exception rather than a wrapper.
                System.Runtime.ExceptionServices.ExceptionDispatchInfo.Throw(ex.InnerExceptions[0]);
            }

            var next = new List<(string Physical, string Relative, DateTime LastWrite)>();
            files.EnsureCapacity(files.Count + found.Sum(f => f.Files.Count));
            for (var i = 0; i < level.Count; i++)
            {
                directories.Add(new FoundDirectory(level[i].Relative, level[i].LastWrite));
                files.AddRange(found[i].Files);
                found[i].Files.Clear();
                found[i].Files.TrimExcess();
                foreach (var subdirectory in found[i].Subdirectories)
                {
                    // A link back up the tree would loop; each real folder is walked once.
                    if (visited.Add(subdirectory.Physical))
                    {
                        next.Add(subdirectory);
                    }
                }
            }

            level = next;
        }

        return (files, directories);
    }

    private static readonly EnumerationOptions s_enumeration = new()
    {
        IgnoreInaccessible = true,
        AttributesToSkip = 0,
        RecurseSubdirectories = false,
        ReturnSpecialDirectories = false,
    };

    /// <summary>One folder's servable files and its subfolders (links resolved, not yet deduplicated).</summary>
    private FoundInDirectory ScanDirectory(string directoryPhysical, string directoryRelative, string rootPrefix)
    {
        var found = new FoundInDirectory([], []);

        // Names and full paths only: no FileSystemInfo, whose attributes cost an lstat(2) and a
        // geteuid(2) per entry. One lstat(2) below tells links from the rest and gives a plain
        // file's length and time.
        var entries = new System.IO.Enumeration.FileSystemEnumerable<(string Name, string FullPath)>(
            directoryPhysical,
            static (ref System.IO.Enumeration.FileSystemEntry entry) => (entry.FileName.ToString(), entry.ToFullPath()),
            s_enumeration);
        foreach (var (name, fullPath) in entries)
        {
            if (!IsServableName(name))
            {
                continue;
            }

            if (name.Contains('\uFFFD'))
            {
                PeregrineLog.UndecodableName(_logger, fullPath);
                continue;
            }

            var physical = fullPath;
            var facts = FileSystemProbe.Probe(physical, followLinks: false);
            if (facts.Kind == FileKind.Link)
            {
                // A link is followed only when everything it resolves to stays under the
                // root: realpath(3) resolves every component, not just the last one.
                var target = FileSystemProbe.RealPath(physical);
                if (target is null)
                {
                    PeregrineLog.DanglingLink(_logger, physical);
                    continue;
                }

                if (!target.StartsWith(rootPrefix, StringComparison.Ordinal))
                {
                    PeregrineLog.LinkOutsideRoot(_logger, physical);
                    continue;
                }

                // The target's kind, length and time, not the link's own.
                physical = target;
                facts = FileSystemProbe.Probe(physical);
            }

            var relative = directoryRelative + "/" + name;
            switch (facts.Kind)
            {
                case FileKind.Directory:
                    found.Subdirectories.Add((physical, relative, new DateTime(facts.LastWriteTicks, DateTimeKind.Utc)));
                    break;
                case FileKind.Regular:
                    found.Files.Add(new FoundFile(relative, physical, name, facts.Length, facts.LastWriteTicks));
                    break;
                case FileKind.Other:
                    PeregrineLog.NotRegularFile(_logger, physical);
                    break;
            }
        }

        return found;
    }

    private bool IsServableName(string name)
    {
        if (name.Length == 0 || name[0] != '.')
        {
            return true;
        }

        return _options.ServeHiddenFiles || name == ".well-known";
    }

    private CatalogEntry?[] BuildFiles(List<FoundFile> files, string root, CatalogSnapshot? previous, CancellationToken cancellationToken)
    {
        var results = new CatalogEntry?[files.Count];
        var fresh = new List<int>(previous is null ? files.Count : 0);
        var stamps = SidecarStamps(files);
        for (var i = 0; i < files.Count; i++)
        {
            var file = files[i];
            if (previous is not null
                && previous.TryFind(file.Relative, out var old)
                && old.IsFile
                && old.IsAt(file.Physical)
                && old.Identity.Length == file.Length
                && old.LastWriteTicks == file.LastWriteTicks
                && old.SidecarStamp == stamps.GetValueOrDefault(file.Relative))
            {
                results[i] = old;
            }
            else
            {
                fresh.Add(i);
            }
        }

        // The memory budget is filled smallest file first: small files are the most requested
        // on typical sites and gain the most from skipping the disk per request.
        fresh.Sort((a, b) => files[a].Length.CompareTo(files[b].Length));
        var cache = new bool[files.Count];
        foreach (var i in fresh)
        {
            if (files[i].Length > _options.MaxCachedFileSize || !_budget.TryReserve(files[i].Length))
            {
                break;
            }

            cache[i] = true;
        }

        Parallel.ForEach(
            fresh,
            new ParallelOptions { CancellationToken = cancellationToken, MaxDegreeOfParallelism = Environment.ProcessorCount },
            i =>
            {
                results[i] = BuildFile(files[i], root, cache[i], stamps.GetValueOrDefault(files[i].Relative));
                if (cache[i])
                {
                    // Account for what is held: nothing if the file was skipped, its new size if
                    // it changed between the scan and the read.
                    _budget.Release(files[i].Length);
                    _budget.TryReserve(results[i]?.Identity.Content?.Length ?? 0);
                }
            });
        return results;
    }

    /// <summary>
    /// For each file with precompressed sidecars (<c>app.js.br</c>, <c>.zst</c>, <c>.gz</c>),
    /// a stamp of their lengths and times: a file whose sidecar changed is rebuilt, so its
    /// variants are checked again, even if the file itself did not change.
    /// </summary>
    private Dictionary<string, long> SidecarStamps(List<FoundFile> files)
    {
        var stamps = new Dictionary<string, long>(StringComparer.Ordinal);
        if (!_options.Compression.Enabled)
        {
            return stamps;
        }

        foreach (var file in files)
        {
            foreach (var extension in s_sidecarExtensions)
            {
                if (file.Relative.EndsWith(extension, StringComparison.Ordinal))
                {
                    var source = file.Relative[..^extension.Length];
                    stamps[source] = HashCode.Combine(stamps.GetValueOrDefault(source), extension, file.Length, file.LastWriteTicks);
                }
            }
        }

        return stamps;
    }

    /// <summary>
    /// The Last-Modified value for a time, one string per second: the files of a deploy share a
    /// handful of seconds, so a million entries hold a few strings, not a million.
    /// </summary>
    private string HttpDateFor(long ticks)
    {
        var seconds = ticks - (ticks % TimeSpan.TicksPerSecond);
        return _httpDates.GetOrAdd(seconds, static s => new DateTimeOffset(s, TimeSpan.Zero).ToString("r"));
    }

    private readonly System.Collections.Concurrent.ConcurrentDictionary<long, string> _httpDates = new();

    private static readonly string[] s_sidecarExtensions = [".br", ".zst", ".gz"];

    private CatalogEntry? BuildFile(FoundFile file, string root, bool cache, long sidecarStamp)
    {
        var contentType = _contentTypes.For(file.Name);
        if (contentType is null)
        {
            return null;
        }

        try
        {
            // A file read whole in one call needs no read-ahead advice (one fadvise(2) less).
            using var handle = File.OpenHandle(file.Physical, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, cache ? FileOptions.None : FileOptions.SequentialScan);

            // Length and time come from the open file (one fstat(2)), so the bytes read and the
            // metadata recorded describe the same version even if the path is replaced meanwhile.
            var facts = FileSystemProbe.Probe(handle);
            var length = facts.Length;
            var lastWrite = new DateTime(facts.LastWriteTicks, DateTimeKind.Utc);
            Representation identity;
            if (cache)
            {
                var content = new byte[length];
                var read = 0;
                while (read < content.Length)
                {
                    var n = RandomAccess.Read(handle, content.AsSpan(read), read);
                    if (n == 0)
                    {
                        throw new IOException("The file was truncated while it was read.");
                    }

                    read += n;
                }

                // In memory: the entry knows the file's path for a re-read; the representation needs none.
                identity = new Representation(Select.ContentCoding.Identity, length, EntityTag.Compute(content), content, physicalPath: null);
            }
            else if (length <= _options.MaxHashedFileSize)
            {
                using var stream = new FileStream(handle, FileAccess.Read, bufferSize: 0);
                identity = new Representation(Select.ContentCoding.Identity, length, EntityTag.Compute(stream), content: null, file.Physical);
            }
            else
            {
                identity = new Representation(Select.ContentCoding.Identity, length, EntityTag.FromMetadata(length, lastWrite.Ticks), content: null, file.Physical);
            }

            var cacheControl = _cachePolicy.For(file.Relative, file.Name);
            var negotiable = _options.Compression.Enabled && Compression.Compressibility.IsCompressible(contentType);
            return CatalogEntry.ForFile(file.Relative, root, file.Physical, identity, contentType, lastWrite.Ticks, HttpDateFor(lastWrite.Ticks), cacheControl, negotiable, sidecarStamp);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            PeregrineLog.Unreadable(_logger, file.Physical, ex.Message);
            return null;
        }
    }

    private void AddDirectories(Dictionary<string, CatalogEntry> entries, List<FoundDirectory> directories)
    {
        var listings = _options.DirectoryListing ? CollectChildren(entries, directories) : null;
        foreach (var (relative, lastWrite) in directories)
        {
            CatalogEntry? index = null;
            foreach (var document in _options.DefaultDocuments)
            {
                if (entries.TryGetValue(relative + "/" + document, out index))
                {
                    break;
                }
            }

            if (index is not null)
            {
                // "/docs/" serves the index; "/docs" redirects there (and "" does, under a
                // mount point, so that "/static" becomes "/static/").
                entries[relative + "/"] = index;
            }
            else if (listings is not null)
            {
                // Sorted once here, so a request renders one page without sorting anything.
                var children = listings.TryGetValue(relative, out var items) ? items : [];
                entries[relative + "/"] = CatalogEntry.ForListing(relative, EncodePath(relative) + "/", Listing.SortedViews.Create(CollectionsMarshal.AsSpan(children)));
            }
            else
            {
                continue;
            }

            entries[relative] = CatalogEntry.ForDirectoryRedirect(relative, EncodePath(relative) + "/");
        }
    }

    private static Dictionary<string, List<Listing.ListingItem>> CollectChildren(Dictionary<string, CatalogEntry> entries, List<FoundDirectory> directories)
    {
        var children = new Dictionary<string, List<Listing.ListingItem>>(StringComparer.Ordinal);
        void Add(string relative, Listing.ListingItem item)
        {
            var parent = relative[..relative.LastIndexOf('/')];
            if (!children.TryGetValue(parent, out var list))
            {
                children[parent] = list = [];
            }

            list.Add(item);
        }

        foreach (var entry in entries.Values)
        {
            Add(entry.RelativePath, new Listing.ListingItem(entry.RelativePath[(entry.RelativePath.LastIndexOf('/') + 1)..], false, entry.Identity.Length, entry.LastModified));
        }

        foreach (var (relative, lastWrite) in directories)
        {
            if (relative.Length != 0)
            {
                var seconds = lastWrite.Ticks - (lastWrite.Ticks % TimeSpan.TicksPerSecond);
                Add(relative, new Listing.ListingItem(relative[(relative.LastIndexOf('/') + 1)..], true, 0, new DateTimeOffset(seconds, TimeSpan.Zero)));
            }
        }

        return children;
    }

    private static string EncodePath(string relative)
    {
        if (relative.Length == 0)
        {
            return "";
        }

        var segments = relative[1..].Split('/');
        for (var i = 0; i < segments.Length; i++)
        {
            segments[i] = Uri.EscapeDataString(segments[i]);
        }

        return "/" + string.Join('/', segments);
    }

    private readonly record struct FoundDirectory(string Relative, DateTime LastWrite);

    private readonly record struct FoundFile(string Relative, string Physical, string Name, long Length, long LastWriteTicks);

    private readonly record struct FoundInDirectory(List<FoundFile> Files, List<(string Physical, string Relative, DateTime LastWrite)> Subdirectories);
}
