using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Logging;
using Peregrine.Sources;

namespace Peregrine.Live;

/// <summary>
/// Tells the catalog what changed in each folder it indexes (the root and every mount): on Linux
/// the paths inotify names (<see cref="InotifyWatcher"/>, applied one by one); elsewhere, or when
/// inotify cannot be had, any <see cref="FileSystemWatcher"/> event asks for a whole rescan. A
/// polling timer rescans for file systems without events, and each folder itself is checked for
/// replacement (a re-pointed link or a folder renamed into its place), which no watcher on the
/// old folder can see.
/// </summary>
internal sealed class CatalogWatcher : IDisposable
{
    private readonly FileCatalog _catalog;
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly Timer _rootCheck;
    private readonly Timer? _poll;

    // The folders watched, by resolved path: the root and each mount's folder, once each. Changed
    // under the lock; read without it (IsBeingWritten) through the array, replaced whole.
    private readonly Dictionary<string, FolderWatch> _folders = new(StringComparer.Ordinal);
    private volatile FolderWatch[] _watches = [];
    private Timer? _fallback;
    private bool _disposed;

    public CatalogWatcher(FileCatalog catalog, PeregrineOptions options, ILogger logger)
    {
        _catalog = catalog;
        _options = options;
        _logger = logger;
        var watch = options.Watch;
        _rootCheck = new Timer(_ => CheckRoot(), null, watch.RootCheckInterval, watch.RootCheckInterval);
        if (watch.PollingInterval is { } interval)
        {
            _poll = new Timer(_ => _catalog.RequestRefresh(), null, interval, interval);
        }
    }

    /// <summary>True while the watcher knows a writer is at the file a URL path of <paramref name="mounts"/> names.</summary>
    public bool IsBeingWritten(Mount[] mounts, string url)
    {
        var watches = _watches;
        foreach (var mount in mounts)
        {
            if (mount.Covers(url))
            {
                foreach (var watch in watches)
                {
                    if (watch.Root == mount.Root && watch.Inotify?.IsBeingWritten(mount.RelativeOf(url)) == true)
                    {
                        return true;
                    }
                }
            }
        }

        return false;
    }

    /// <summary>True when writers are followed to their close (inotify) in every folder watched, so a rescan need not apply the settle rule by time.</summary>
    public bool HasCloseEvents
    {
        get
        {
            var watches = _watches;
            return watches.Length > 0 && Array.TrueForAll(watches, watch => watch.Inotify is not null);
        }
    }

    /// <summary>Watches the folders of <paramref name="snapshot"/>, and no others.</summary>
    public void Retarget(CatalogSnapshot snapshot) => Watch(snapshot.Mounts.Select(mount => mount.Root));

    /// <summary>Watches <paramref name="roots"/> (resolved paths), starting what is not watched yet and stopping what is no longer asked for.</summary>
    public void Watch(IEnumerable<string> roots)
    {
        lock (_rootCheck)
        {
            if (_disposed)
            {
                return;
            }

            var wanted = new HashSet<string>(roots, StringComparer.Ordinal);
            foreach (var (root, watch) in _folders.ToArray())
            {
                if (!wanted.Contains(root) || (watch.Inotify is null && watch.Watcher is null))
                {
                    watch.Dispose();
                    _folders.Remove(root);
                }
            }

            foreach (var root in wanted)
            {
                if (!_folders.ContainsKey(root))
                {
                    _folders[root] = Start(root);
                }
            }

            _watches = [.. _folders.Values];
            if (_fallback is not null && Array.TrueForAll(_watches, watch => watch.Inotify is not null || watch.Watcher is not null))
            {
                _fallback.Dispose();
                _fallback = null;
            }
        }
    }

    /// <summary>Watches one folder: inotify where it can be had, else a <see cref="FileSystemWatcher"/>, else polling.</summary>
    private FolderWatch Start(string root)
    {
        var watch = new FolderWatch(root);
        watch.Inotify = InotifyWatcher.TryStart(_catalog, _options, root, out var failure);
        if (watch.Inotify is not null)
        {
            return watch;
        }

        if (failure is not null && failure.Contains("limit", StringComparison.Ordinal))
        {
            PeregrineLog.WatcherUnavailable(_logger, root, failure);
        }

        try
        {
            var watcher = new FileSystemWatcher(root)
            {
                IncludeSubdirectories = true,
                NotifyFilter = NotifyFilters.FileName | NotifyFilters.DirectoryName | NotifyFilters.LastWrite | NotifyFilters.Size | NotifyFilters.CreationTime,
                InternalBufferSize = 64 * 1024,
            };
            FileSystemEventHandler changed = (_, e) => OnChanged(root, e);
            watcher.Changed += changed;
            watcher.Created += changed;
            watcher.Deleted += changed;
            watcher.Renamed += (_, e) => OnChanged(root, e);

            // Events were lost (the kernel queue overflowed): only a rescan can tell what changed.
            watcher.Error += (_, _) => _catalog.RequestRefresh();
            watcher.EnableRaisingEvents = true;
            watch.Watcher = watcher;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or PlatformNotSupportedException)
        {
            // Typically the inotify watch or instance limit. Polling keeps the index
            // current, more slowly.
            // One fallback timer, kept (an unreferenced timer can be collected) however
            // often a rebuild retries the watcher.
            if (_fallback is null)
            {
                PeregrineLog.WatcherUnavailable(_logger, root, ex.Message);
                _poll?.Dispose();
                var every = TimeSpan.FromSeconds(2);
                _fallback = new Timer(_ => _catalog.RequestRefresh(), null, every, every);
            }
        }

        return watch;
    }

    private void OnChanged(string root, FileSystemEventArgs e)
    {
        if (!_options.ServeHiddenFiles && IsHidden(root, e.FullPath) && (e is not RenamedEventArgs renamed || IsHidden(root, renamed.OldFullPath)))
        {
            // Nothing under a dot-folder is served, so editor swap files and .git churn need
            // no rebuild. A rename out of or into hiding does.
            return;
        }

        _catalog.RequestRefresh();
    }

    private static bool IsHidden(string root, string fullPath)
    {
        var relative = fullPath.AsSpan(Math.Min(root.Length, fullPath.Length));
        foreach (var range in relative.Split('/'))
        {
            var segment = relative[range];
            if (segment.Length > 0 && segment[0] == '.' && !segment.SequenceEqual(".well-known"))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>Asks for a rescan when a folder indexed now resolves elsewhere (a re-pointed link, a folder renamed into its place).</summary>
    private void CheckRoot()
    {
        var current = _catalog.Current;
        if (current is null || _catalog.RescanUnderWay)
        {
            // A rescan asked for (a bucket's new release) resolves the roots itself: asking again
            // would index the new root twice.
            return;
        }

        foreach (var mount in current.Mounts)
        {
            var root = FileSystemProbe.RealPath(Path.GetFullPath(mount.ConfiguredRoot));
            if (root is null)
            {
                // Mid-deploy (between two renames) or removed: keep serving what there is.
                continue;
            }

            if (root != mount.Root || FileSystemProbe.NodeOf(root) != mount.RootNode)
            {
                _catalog.RequestRefresh();
                return;
            }
        }
    }

    public void Dispose()
    {
        _rootCheck.Dispose();
        _poll?.Dispose();
        lock (_rootCheck)
        {
            // Nothing is watched again after this, whoever asks (a rescan that found a new root).
            _disposed = true;
            foreach (var watch in _folders.Values)
            {
                watch.Dispose();
            }

            _folders.Clear();
            _watches = [];
            _fallback?.Dispose();
        }
    }

    /// <summary>How one folder is watched: inotify, or a <see cref="FileSystemWatcher"/>, or neither (polled).</summary>
    private sealed class FolderWatch(string root) : IDisposable
    {
        public string Root { get; } = root;

        public InotifyWatcher? Inotify { get; set; }

        public FileSystemWatcher? Watcher { get; set; }

        public void Dispose()
        {
            Inotify?.Dispose();
            Watcher?.Dispose();
        }
    }
}
