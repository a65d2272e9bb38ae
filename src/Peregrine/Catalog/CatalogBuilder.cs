using System.Diagnostics;
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
    }

    public CatalogSnapshot Build(CancellationToken cancellationToken = default)
    {
        var stopwatch = Stopwatch.StartNew();
        var root = FileSystemProbe.RealPath(Path.GetFullPath(_options.Root))
            ?? throw new DirectoryNotFoundException($"The root '{_options.Root}' does not exist.");

        var (files, directories) = Scan(root, cancellationToken);
        var entries = new Dictionary<string, CatalogEntry>(files.Count + directories.Count * 2, StringComparer.Ordinal);
        var built = BuildFiles(files, cancellationToken);

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

        var snapshot = new CatalogSnapshot(entries, fileCount, totalBytes, cachedBytes);
        PeregrineLog.Indexed(_logger, fileCount, totalBytes, cachedBytes, root, stopwatch.ElapsedMilliseconds);
        return snapshot;
    }

    private (List<FoundFile> Files, List<string> Directories) Scan(string root, CancellationToken cancellationToken)
    {
        var files = new List<FoundFile>();
        var directories = new List<string>();
        var visited = new HashSet<string>(StringComparer.Ordinal) { root };
        var pending = new Stack<(string Physical, string Relative)>();
        pending.Push((root, ""));
        var enumeration = new EnumerationOptions
        {
            IgnoreInaccessible = true,
            AttributesToSkip = 0,
            RecurseSubdirectories = false,
            ReturnSpecialDirectories = false,
        };
        var rootPrefix = root.EndsWith(Path.DirectorySeparatorChar) ? root : root + Path.DirectorySeparatorChar;

        while (pending.TryPop(out var directory))
        {
            cancellationToken.ThrowIfCancellationRequested();
            directories.Add(directory.Relative);
            foreach (var info in new DirectoryInfo(directory.Physical).EnumerateFileSystemInfos("*", enumeration))
            {
                var name = info.Name;
                if (!IsServableName(name))
                {
                    continue;
                }

                if (name.Contains('\uFFFD'))
                {
                    PeregrineLog.UndecodableName(_logger, info.FullName);
                    continue;
                }

                var physical = info.FullName;
                if (info.LinkTarget is not null)
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

                    physical = target;
                }

                var relative = directory.Relative + "/" + name;
                switch (FileSystemProbe.KindOf(physical))
                {
                    case FileKind.Directory:
                        // A link back up the tree would loop; each real folder is walked once.
                        if (visited.Add(physical))
                        {
                            pending.Push((physical, relative));
                        }

                        break;
                    case FileKind.Regular:
                        files.Add(new FoundFile(relative, physical, name));
                        break;
                    case FileKind.Other:
                        PeregrineLog.NotRegularFile(_logger, physical);
                        break;
                }
            }
        }

        return (files, directories);
    }

    private bool IsServableName(string name)
    {
        if (name.Length == 0 || name[0] != '.')
        {
            return true;
        }

        return _options.ServeHiddenFiles || name == ".well-known";
    }

    private CatalogEntry?[] BuildFiles(List<FoundFile> files, CancellationToken cancellationToken)
    {
        // The memory budget is filled smallest file first: small files are the most requested
        // on typical sites and gain the most from skipping the disk per request.
        var sizes = new long[files.Count];
        for (var i = 0; i < files.Count; i++)
        {
            try
            {
                sizes[i] = new FileInfo(files[i].Physical).Length;
            }
            catch (IOException)
            {
                sizes[i] = long.MaxValue;
            }
        }

        var order = Enumerable.Range(0, files.Count).OrderBy(i => sizes[i]).ToArray();
        var cache = new bool[files.Count];
        foreach (var i in order)
        {
            if (sizes[i] > _options.MaxCachedFileSize || !_budget.TryReserve(sizes[i]))
            {
                break;
            }

            cache[i] = true;
        }

        var results = new CatalogEntry?[files.Count];
        Parallel.For(
            0,
            files.Count,
            new ParallelOptions { CancellationToken = cancellationToken, MaxDegreeOfParallelism = Environment.ProcessorCount },
            i =>
            {
                results[i] = BuildFile(files[i], cache[i]);
                if (cache[i])
                {
                    // Account for what is held: nothing if the file was skipped, its new size if
                    // it changed between the size check and the read.
                    _budget.Release(sizes[i]);
                    _budget.TryReserve(results[i]?.Identity.Content?.Length ?? 0);
                }
            });
        return results;
    }

    private CatalogEntry? BuildFile(FoundFile file, bool cache)
    {
        var contentType = _contentTypes.For(file.Name);
        if (contentType is null)
        {
            return null;
        }

        try
        {
            var info = new FileInfo(file.Physical);
            var lastModified = TruncateToSeconds(info.LastWriteTimeUtc);
            Representation identity;
            if (cache)
            {
                var content = File.ReadAllBytes(file.Physical);
                identity = new Representation(Select.ContentCoding.Identity, content.Length, EntityTag.Compute(content), content, file.Physical);
            }
            else
            {
                using var stream = new FileStream(file.Physical, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, 1, FileOptions.SequentialScan);
                var length = stream.Length;
                var etag = EntityTag.Compute(stream);
                identity = new Representation(Select.ContentCoding.Identity, length, etag, content: null, file.Physical);
            }

            var cacheControl = _options.FingerprintedNames && Fingerprint.IsFingerprinted(file.Name)
                ? _options.FingerprintedCacheControl
                : _options.CacheControl;
            var negotiable = _options.Compression.Enabled && Compression.Compressibility.IsCompressible(contentType);
            return CatalogEntry.ForFile(file.Relative, file.Physical, identity, contentType, lastModified, cacheControl, negotiable);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            PeregrineLog.Unreadable(_logger, file.Physical, ex.Message);
            return null;
        }
    }

    private void AddDirectories(Dictionary<string, CatalogEntry> entries, List<string> directories)
    {
        foreach (var relative in directories)
        {
            CatalogEntry? index = null;
            foreach (var document in _options.DefaultDocuments)
            {
                if (entries.TryGetValue(relative + "/" + document, out index))
                {
                    break;
                }
            }

            if (index is null)
            {
                continue;
            }

            // "/docs/" serves the index; "/docs" redirects there (and "" does, under a mount
            // point, so that "/static" becomes "/static/").
            entries[relative + "/"] = index;
            entries[relative] = CatalogEntry.ForDirectoryRedirect(relative, EncodePath(relative) + "/");
        }
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

    private static DateTimeOffset TruncateToSeconds(DateTime utc)
    {
        // HTTP dates have one-second resolution (RFC 9110 §5.6.7); comparing against a
        // sub-second mtime would make every If-Modified-Since look older than the file.
        return new DateTimeOffset(utc.Ticks - (utc.Ticks % TimeSpan.TicksPerSecond), TimeSpan.Zero);
    }

    private readonly record struct FoundFile(string Relative, string Physical, string Name);
}
