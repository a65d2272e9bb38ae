using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Logging;
using Peregrine.Sources;

namespace Peregrine.Live;

/// <summary>
/// Tells the catalog what changed: on Linux the paths inotify names (<see cref="InotifyWatcher"/>,
/// applied one by one); elsewhere, or when inotify cannot be had, any
/// <see cref="FileSystemWatcher"/> event asks for a whole rescan. A polling timer rescans for
/// file systems without events, and the root itself is checked for replacement (a re-pointed
/// link or a folder renamed into its place), which no watcher on the old folder can see.
/// </summary>
internal sealed class CatalogWatcher : IDisposable
{
    private readonly FileCatalog _catalog;
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly Timer _rootCheck;
    private readonly Timer? _poll;
    private FileSystemWatcher? _watcher;
    private volatile InotifyWatcher? _inotify;
    private Timer? _fallback;
    private string _watchedRoot = "";
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

    /// <summary>True while the watcher knows a writer is at <paramref name="relativePath"/>.</summary>
    public bool IsBeingWritten(string relativePath) => _inotify?.IsBeingWritten(relativePath) == true;

    /// <summary>True when writers are followed to their close (inotify), so a rescan need not apply the settle rule by time.</summary>
    public bool HasCloseEvents => _inotify is not null;

    /// <summary>Watches the root of <paramref name="snapshot"/>, if it is not watched already.</summary>
    public void Retarget(CatalogSnapshot snapshot) => Watch(snapshot.Root);

    /// <summary>Watches <paramref name="root"/> (a resolved path), if it is not watched already.</summary>
    public void Watch(string root)
    {
        lock (_rootCheck)
        {
            if (_disposed || (_watchedRoot == root && (_watcher is not null || _inotify is not null)))
            {
                return;
            }

            _watcher?.Dispose();
            _watcher = null;
            _inotify?.Dispose();
            _inotify = null;
            _watchedRoot = root;
            _inotify = InotifyWatcher.TryStart(_catalog, _options, root, out var failure);
            if (_inotify is not null)
            {
                _fallback?.Dispose();
                _fallback = null;
                return;
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
                watcher.Changed += OnChanged;
                watcher.Created += OnChanged;
                watcher.Deleted += OnChanged;
                watcher.Renamed += OnChanged;

                // Events were lost (the kernel queue overflowed): only a rescan can tell what changed.
                watcher.Error += (_, _) => _catalog.RequestRefresh();
                watcher.EnableRaisingEvents = true;
                _watcher = watcher;
                _fallback?.Dispose();
                _fallback = null;
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
        }
    }

    private void OnChanged(object sender, FileSystemEventArgs e)
    {
        if (!_options.ServeHiddenFiles && IsHidden(e.FullPath) && (e is not RenamedEventArgs renamed || IsHidden(renamed.OldFullPath)))
        {
            // Nothing under a dot-folder is served, so editor swap files and .git churn need
            // no rebuild. A rename out of or into hiding does.
            return;
        }

        _catalog.RequestRefresh();
    }

    private bool IsHidden(string fullPath)
    {
        var relative = fullPath.AsSpan(Math.Min(_watchedRoot.Length, fullPath.Length));
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

    private void CheckRoot()
    {
        var current = _catalog.Current;
        if (current is null)
        {
            return;
        }

        var root = FileSystemProbe.RealPath(Path.GetFullPath(_options.Root));
        if (root is null)
        {
            // Mid-deploy (between two renames) or removed: keep serving what there is.
            return;
        }

        if (root != current.Root || FileSystemProbe.IdentityOf(root) != current.RootIdentity)
        {
            _catalog.RequestRefresh();
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
            _watcher?.Dispose();
            _watcher = null;
            _inotify?.Dispose();
            _inotify = null;
            _fallback?.Dispose();
        }
    }
}
