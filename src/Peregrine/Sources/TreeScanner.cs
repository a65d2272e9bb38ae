using System.IO.Enumeration;
using Microsoft.Extensions.Logging;
using Peregrine.Logging;

namespace Peregrine.Sources;

/// <summary>
/// The scan, first step of an index: walks the root and lists the files that may be served and
/// the folders that hold them. Hidden names are refused (unless configured), links are followed
/// only when everything they resolve to stays under the root, and each real folder is walked
/// once. Nothing is opened or read here: only names and one lstat(2) per entry.
/// </summary>
internal sealed class TreeScanner
{
    private static readonly EnumerationOptions s_enumeration = new()
    {
        // A folder that cannot be read is reported (ScanDirectory) rather than skipped unseen.
        IgnoreInaccessible = false,
        AttributesToSkip = 0,
        RecurseSubdirectories = false,
        ReturnSpecialDirectories = false,
    };

    private readonly bool _serveHiddenFiles;
    private readonly ILogger _logger;

    public TreeScanner(PeregrineOptions options, ILogger logger)
    {
        _serveHiddenFiles = options.ServeHiddenFiles;
        _logger = logger;
    }

    /// <summary>The servable files and the folders under <paramref name="root"/>, the root folder first.</summary>
    public ScannedTree Scan(string root, CancellationToken cancellationToken) => Scan(root, "", cancellationToken);

    /// <summary>
    /// The servable files and the folders under the folder <paramref name="relative"/> of
    /// <paramref name="root"/> (<c>""</c> for the root itself), that folder first: how a folder
    /// that appeared or moved in is taken in without scanning the rest of the tree.
    /// </summary>
    public ScannedTree Scan(string root, string relative, CancellationToken cancellationToken)
    {
        var files = new List<FoundFile>();
        var directories = new List<FoundDirectory>();
        var start = root + relative;
        var visited = new HashSet<string>(StringComparer.Ordinal) { start };
        var rootPrefix = root.EndsWith(Path.DirectorySeparatorChar) ? root : root + Path.DirectorySeparatorChar;
        var level = new List<FoundSubdirectory> { new(start, relative, Directory.GetLastWriteTimeUtc(start)) };

        // Level by level: the folders of one level are read in parallel (a scan is mostly
        // getdents and stat calls, each waiting in the kernel), and the next level is collected
        // in a fixed order, so which of two links to one folder is walked does not depend on
        // thread timing: the shallower path, then the first in folder order.
        while (level.Count > 0)
        {
            var found = new FoundInDirectory[level.Count];
            HelpedLoop.For(level.Count, i => found[i] = ScanDirectory(level[i].Physical, level[i].Relative, root, rootPrefix), cancellationToken);

            var next = new List<FoundSubdirectory>();
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

        return new ScannedTree(files, directories);
    }

    /// <summary>
    /// One folder's servable files and its subfolders, without descending: what a folder's
    /// listing needs when one of its files changed.
    /// </summary>
    public ScannedTree ScanFolder(string root, string relative)
    {
        var rootPrefix = root.EndsWith(Path.DirectorySeparatorChar) ? root : root + Path.DirectorySeparatorChar;
        var found = ScanDirectory(root + relative, relative, root, rootPrefix);
        var directories = new List<FoundDirectory> { new(relative, Directory.GetLastWriteTimeUtc(root + relative)) };
        directories.AddRange(found.Subdirectories.Select(subdirectory => new FoundDirectory(subdirectory.Relative, subdirectory.LastWrite)));
        return new ScannedTree(found.Files, directories);
    }

    /// <summary>One folder's servable files and its subfolders (links resolved, not yet deduplicated).</summary>
    private FoundInDirectory ScanDirectory(string directoryPhysical, string directoryRelative, string root, string rootPrefix)
    {
        var found = new FoundInDirectory([], []);

        // Names and full paths only: no FileSystemInfo, whose attributes cost an lstat(2) and a
        // geteuid(2) per entry. One lstat(2) below tells links from the rest and gives a plain
        // file's length and time.
        try
        {
            // opendir(2) runs here, in the constructor.
            var entries = new FileSystemEnumerable<(string Name, string FullPath)>(
                directoryPhysical,
                static (ref FileSystemEntry entry) => (entry.FileName.ToString(), entry.ToFullPath()),
                s_enumeration);
            AddEntries(entries, directoryRelative, root, rootPrefix, found);
        }
        catch (UnauthorizedAccessException ex)
        {
            // EACCES on opendir(2): the folder and all under it are left out, the rest of the
            // tree is served. Once per scan, like an unreadable file.
            PeregrineLog.Unreadable(_logger, directoryPhysical, ex.Message);
        }

        return found;
    }

    private void AddEntries(FileSystemEnumerable<(string Name, string FullPath)> entries, string directoryRelative, string root, string rootPrefix, FoundInDirectory found)
    {
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
                    found.Subdirectories.Add(new(physical, relative, new DateTime(facts.LastWriteTicks, DateTimeKind.Utc)));
                    break;
                case FileKind.Regular:
                    found.Files.Add(new FoundFile(relative, physical, name, facts.Length, facts.LastWriteTicks, root));
                    break;
                case FileKind.Other:
                    PeregrineLog.NotRegularFile(_logger, physical);
                    break;
            }
        }
    }

    private bool IsServableName(string name)
    {
        if (name.Length == 0 || name[0] != '.')
        {
            return true;
        }

        return _serveHiddenFiles || name == ".well-known";
    }

    private readonly record struct FoundSubdirectory(string Physical, string Relative, DateTime LastWrite);

    private readonly record struct FoundInDirectory(List<FoundFile> Files, List<FoundSubdirectory> Subdirectories);
}

/// <summary>What a scan found: the servable files, and every folder walked, the root (<c>""</c>) first.</summary>
internal readonly record struct ScannedTree(List<FoundFile> Files, List<FoundDirectory> Directories);

/// <summary>A folder as scanned: its path under the root (<c>""</c> for the root) and its modification time.</summary>
internal readonly record struct FoundDirectory(string Relative, DateTime LastWrite);

/// <summary>
/// A regular file as scanned, links resolved: length and time are the lstat(2) of the file
/// itself. <see cref="Relative"/> is its path in the index: the path under <see cref="Root"/>,
/// the folder scanned, after a mount's URL prefix of <see cref="PrefixLength"/> characters.
/// </summary>
internal readonly record struct FoundFile(string Relative, string Physical, string Name, long Length, long LastWriteTicks, string Root = "", int PrefixLength = 0);
