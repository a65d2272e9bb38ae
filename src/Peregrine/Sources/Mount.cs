using System.Collections.Frozen;

namespace Peregrine.Sources;

/// <summary>
/// One folder of the index as resolved for a build: the URL prefix its files are served under
/// (<c>""</c> for the site root, else <c>/docs</c>), the folder every link resolved, which folder
/// that was (a rename or a re-pointed link changes it) and the files it is limited to.
/// </summary>
internal sealed class Mount
{
    private readonly FrozenSet<string>? _files;
    private readonly FrozenSet<string>? _folders;

    public Mount(string urlPrefix, string configuredRoot, string root, FileNode rootNode, IEnumerable<string>? files, int order)
    {
        UrlPrefix = urlPrefix;
        ConfiguredRoot = configuredRoot;
        Root = root;
        RootNode = rootNode;
        Order = order;
        if (files is not null)
        {
            _files = files.ToFrozenSet(StringComparer.Ordinal);
            var folders = new HashSet<string>(StringComparer.Ordinal);
            foreach (var file in _files)
            {
                for (var slash = file.LastIndexOf('/'); slash > 0; slash = file.LastIndexOf('/', slash - 1))
                {
                    folders.Add(file[..slash]);
                }
            }

            _folders = folders.ToFrozenSet(StringComparer.Ordinal);
        }
    }

    /// <summary>The URL path the folder is served under, without a trailing slash: <c>""</c> for the site root.</summary>
    public string UrlPrefix { get; }

    /// <summary>The folder as configured, for messages.</summary>
    public string ConfiguredRoot { get; }

    /// <summary>The folder, every link resolved.</summary>
    public string Root { get; }

    public FileNode RootNode { get; }

    /// <summary>Where the mount was listed: 0 for <see cref="PeregrineOptions.Root"/>, then the mounts in order.</summary>
    public int Order { get; }

    /// <summary>True when the mount is limited to some of its folder's files.</summary>
    public bool IsLimited => _files is not null;

    /// <summary>True when <paramref name="url"/> is under this mount's prefix (the prefix itself included).</summary>
    public bool Covers(ReadOnlySpan<char> url)
        => url.StartsWith(UrlPrefix, StringComparison.Ordinal) && (url.Length == UrlPrefix.Length || url[UrlPrefix.Length] == '/');

    /// <summary>The path under the folder for a URL path this mount <see cref="Covers"/>: <c>""</c> for the folder itself.</summary>
    public string RelativeOf(string url) => url[UrlPrefix.Length..];

    /// <summary>True when a file at <paramref name="relative"/> (under the folder, leading slash) may be served.</summary>
    public bool AllowsFile(string relative) => _files is null || _files.Contains(relative);

    /// <summary>True when the folder at <paramref name="relative"/> may hold served files (<c>""</c> always does).</summary>
    public bool AllowsFolder(string relative) => _folders is null || relative.Length == 0 || _folders.Contains(relative);

    /// <summary>A scan of this mount's folder (or of one folder under it) as URL paths, limited to its files.</summary>
    public ScannedTree ToUrls(ScannedTree tree)
    {
        var files = new List<FoundFile>(tree.Files.Count);
        foreach (var file in tree.Files)
        {
            if (AllowsFile(file.Relative))
            {
                files.Add(file with { Relative = UrlPrefix + file.Relative, PrefixLength = UrlPrefix.Length });
            }
        }

        var directories = new List<FoundDirectory>(tree.Directories.Count);
        foreach (var directory in tree.Directories)
        {
            if (AllowsFolder(directory.Relative))
            {
                directories.Add(directory with { Relative = UrlPrefix + directory.Relative });
            }
        }

        return new ScannedTree(files, directories);
    }

    /// <summary>Same folder, same prefix, same limits: a rescan need not say the mount moved.</summary>
    public bool SameAs(Mount other)
        => UrlPrefix == other.UrlPrefix && Root == other.Root && RootNode == other.RootNode;
}

/// <summary>
/// The folders an index is built from, in the order they take precedence: longest URL prefix
/// first, and at equal prefixes <see cref="PeregrineOptions.Root"/> first, then the mounts in
/// the order listed. A URL path is served from the first that holds it.
/// </summary>
internal static class MountTable
{
    /// <summary>Resolves the configured folders; throws <see cref="DirectoryNotFoundException"/> naming one that does not exist.</summary>
    public static Mount[] Resolve(PeregrineOptions options)
    {
        var mounts = new List<Mount> { Resolve("", options.Root, null, 0) };
        var order = 1;
        foreach (var mount in options.Mounts)
        {
            mounts.Add(Resolve(PrefixOf(mount.UrlPath), mount.Root, mount.Files, order++));
        }

        return [.. mounts.OrderByDescending(mount => mount.UrlPrefix.Length).ThenBy(mount => mount.Order)];
    }

    /// <summary>The URL prefix of a mount's URL path: <c>/</c> is <c>""</c>.</summary>
    public static string PrefixOf(string urlPath) => urlPath == "/" ? "" : urlPath;

    private static Mount Resolve(string prefix, string configuredRoot, IEnumerable<string>? files, int order)
    {
        var root = FileSystemProbe.RealPath(Path.GetFullPath(configuredRoot))
            ?? throw new DirectoryNotFoundException(order == 0
                ? $"The root '{configuredRoot}' does not exist."
                : $"The folder '{configuredRoot}' mounted at '{(prefix.Length == 0 ? "/" : prefix)}' does not exist.");
        return new Mount(prefix, configuredRoot, root, FileSystemProbe.NodeOf(root), files, order);
    }

    /// <summary>The root mount (<see cref="PeregrineOptions.Root"/>).</summary>
    public static Mount RootOf(Mount[] mounts)
    {
        foreach (var mount in mounts)
        {
            if (mount.Order == 0)
            {
                return mount;
            }
        }

        throw new InvalidOperationException("The mount table has no root.");
    }

    /// <summary>True when the two tables name the same folders under the same prefixes.</summary>
    public static bool Same(Mount[] a, Mount[] b)
    {
        if (a.Length != b.Length)
        {
            return false;
        }

        for (var i = 0; i < a.Length; i++)
        {
            if (!a[i].SameAs(b[i]))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// The file a URL path names, taken from the first mount that holds it: the mount, the
    /// file's path on disk and its lstat(2). <see langword="null"/> when no mount covers the path.
    /// When none holds it, the first mount that covers it, with <see cref="FileKind.Missing"/>.
    /// </summary>
    public static (Mount Mount, string Physical, FileFacts Facts)? Locate(Mount[] mounts, string url)
    {
        (Mount, string, FileFacts)? first = null;
        foreach (var mount in mounts)
        {
            if (!mount.Covers(url))
            {
                continue;
            }

            var relative = mount.RelativeOf(url);
            var physical = mount.Root + relative;
            var facts = FileSystemProbe.Probe(physical, followLinks: false);
            var allowed = facts.Kind == FileKind.Directory ? mount.AllowsFolder(relative) : mount.AllowsFile(relative);
            if (facts.Kind != FileKind.Missing && allowed)
            {
                return (mount, physical, facts);
            }

            first ??= (mount, physical, facts with { Kind = FileKind.Missing });
        }

        return first;
    }

    /// <summary>
    /// The one mount whose folder holds the folder at <paramref name="url"/>, when no other mount
    /// adds to it (another folder at that URL, or a mount under it); <see langword="null"/>
    /// otherwise: the folder is then rebuilt by a whole rescan, which overlays them.
    /// </summary>
    public static Mount? SoleHolderOf(Mount[] mounts, string url)
    {
        Mount? holder = null;
        foreach (var mount in mounts)
        {
            if (mount.Covers(url))
            {
                var relative = mount.RelativeOf(url);
                if (mount.AllowsFolder(relative) && FileSystemProbe.Probe(mount.Root + relative).Kind == FileKind.Directory)
                {
                    if (holder is not null)
                    {
                        return null;
                    }

                    holder = mount;
                }
            }
            else if (mount.UrlPrefix.Length > url.Length && mount.UrlPrefix.StartsWith(url, StringComparison.Ordinal) && mount.UrlPrefix[url.Length] == '/')
            {
                // Mounted below this folder: its listing and its removal involve both.
                return null;
            }
        }

        return holder;
    }

    /// <summary>The folders above each mount's prefix (<c>/a</c> for <c>/a/b</c>), which no folder may hold but must exist for the site's tree.</summary>
    public static IEnumerable<(string Folder, Mount By)> ImpliedFolders(Mount[] mounts)
    {
        foreach (var mount in mounts)
        {
            for (var slash = mount.UrlPrefix.LastIndexOf('/'); slash > 0; slash = mount.UrlPrefix.LastIndexOf('/', slash - 1))
            {
                yield return (mount.UrlPrefix[..slash], mount);
            }
        }
    }

    /// <summary>True when some mount's URL path is below <paramref name="url"/> (<c>/a/b</c> below <c>/a</c>).</summary>
    public static bool HasMountUnder(Mount[] mounts, string url)
    {
        foreach (var mount in mounts)
        {
            if (mount.UrlPrefix.Length > url.Length && mount.UrlPrefix.StartsWith(url, StringComparison.Ordinal) && mount.UrlPrefix[url.Length] == '/')
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>True when the folder at <paramref name="url"/> is in the site: some mount holds it, or a mount is below it.</summary>
    public static bool HoldsFolder(Mount[] mounts, string url)
    {
        foreach (var mount in mounts)
        {
            if (mount.Covers(url))
            {
                var relative = mount.RelativeOf(url);
                if (mount.AllowsFolder(relative) && FileSystemProbe.Probe(mount.Root + relative).Kind == FileKind.Directory)
                {
                    return true;
                }
            }
        }

        return mounts.Length > 1 && HasMountUnder(mounts, url);
    }
}
