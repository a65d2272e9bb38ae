using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using Peregrine.Interop;
using static Peregrine.Interop.Libc;

namespace Peregrine.Live;

/// <summary>
/// Watches a tree through inotify(7) directly, for what <see cref="FileSystemWatcher"/> does not
/// pass on: <c>IN_CLOSE_WRITE</c> (a writer is done) and <c>IN_MOVED_TO</c> (a file renamed into
/// place, whole). A file that is created or modified is held back as "being written" until its
/// writer closes it; only then is it read and published, so a half-written file is never
/// served and the previous version stays until the new one is whole.
/// </summary>
/// <remarks>
/// <para>
/// One thread reads the events (non-blocking descriptor and <c>poll(2)</c>), coalesces them for <see cref="WatchOptions.CoalescingDelay"/>
/// and tells the catalog's publisher that a batch is ready (<see cref="FileCatalog.Post(InotifyWatcher)"/>).
/// The publisher takes the batch when it comes to it (<see cref="TakeBatch"/>: paths changed
/// while it was busy join it), reads each file and publishes the next snapshot. Before publishing
/// it asks whether events came for a path during its read; the events waiting are read then,
/// under this watcher's own lock. A path written again meanwhile is left at its previous version
/// and handed back (<see cref="Defer"/>) to wait for its writer once more.
/// </para>
/// <para>
/// Two rules cover writers that never close: a file with no event for
/// <see cref="WatchOptions.SettleTime"/> is taken as it stands, unless a writer still has it
/// open (asked of the kernel with a read lease, or where none can be had, <c>IN_OPEN</c> not yet
/// matched by a close: a writer that truncated it and paused before writing is not published
/// empty), which covers writes whose open the watcher cannot see (a hard link written under
/// another name); and a file written for
/// longer than <see cref="WatchOptions.OpenWriteLimit"/> (a log, or a writer that keeps the file
/// open and stopped) is published as a snapshot that held still while it was read, again at each
/// such interval. Following opens costs two events per open of a file under the root, readers'
/// included (a response read from an original rather than from its copy is one). A queue
/// overflow (<c>IN_Q_OVERFLOW</c>) means events were lost, and asks for a whole rescan.
/// </para>
/// </remarks>
internal sealed partial class InotifyWatcher : IDisposable
{
    private readonly FileCatalog _catalog;
    private readonly WatchOptions _options;
    private readonly bool _serveHiddenFiles;
    private readonly string _root;
    private readonly int _fd;

    // An eventfd that ends the thread's wait: written when the watcher is disposed, and when the
    // publisher leaves the thread something to follow (paths handed back by Defer, events it
    // read itself in TakeBatch or StillSettled).
    private readonly int _wake;
    private readonly Dictionary<int, string> _folders = [];
    private readonly Dictionary<string, int> _watches = new(StringComparer.Ordinal);
    private readonly ConcurrentDictionary<string, Writing> _writing = new(StringComparer.Ordinal);
    private readonly Dictionary<string, ChangedPath> _queued = new(StringComparer.Ordinal);

    // Opens of each file not yet matched by a close (IN_OPEN against IN_CLOSE_WRITE and
    // IN_CLOSE_NOWRITE), on this thread only: what the settle rule goes by where the kernel cannot
    // be asked (IsOpenForWriting). inotify does not say how a file was opened, so a reader counts
    // too, and it merges two identical events in a row (two closes), so a count can stay too high;
    // a count left wrong costs at most a wait until OpenWriteLimit.
    private readonly Dictionary<string, int> _open = new(StringComparer.Ordinal);
    private readonly byte[] _buffer = new byte[64 * 1024];
    private readonly Thread _thread;

    // Held while events are read and the state they feed is used: by this watcher's thread, and
    // by the publisher when it asks about writers. Never held while calling out of the watcher
    // but to post (which does not wait).
    private readonly Lock _events = new();

    // The paths events named since the publisher began checking a batch (BeginWriterCheck).
    private HashSet<string>? _touched;
    private bool _closed;

    // A batch is posted and not yet taken: what is queued meanwhile joins it.
    private bool _batchPosted;
    private long _firstQueuedAt;
    private volatile bool _stopping;

    /// <summary>The name of the thread that reads the events.</summary>
    internal const string ThreadName = "Peregrine watcher";

    private InotifyWatcher(FileCatalog catalog, PeregrineOptions options, string root, int fd, int wake)
    {
        _catalog = catalog;
        _options = options.Watch;
        _serveHiddenFiles = options.ServeHiddenFiles;
        _root = root;
        _fd = fd;
        _wake = wake;
        _thread = new Thread(Run) { IsBackground = true, Name = ThreadName };
    }

    /// <summary>When a file was first and last seen written since it was last published.</summary>
    private sealed record Writing(long Since, long Last);

    /// <summary>
    /// Starts watching <paramref name="root"/> and every folder under it; <see langword="null"/>
    /// with the reason when inotify cannot be used (not Linux, or the instance or watch limit
    /// is reached), and the caller falls back to <see cref="FileSystemWatcher"/> and polling.
    /// </summary>
    public static InotifyWatcher? TryStart(FileCatalog catalog, PeregrineOptions options, string root, out string? failure)
    {
        failure = null;
        if (!PlatformParts.IsNative)
        {
            failure = PlatformParts.PortableForced ? "the portable parts are forced (" + PlatformParts.PortableVariable + ")" : "inotify needs Linux";
            return null;
        }

        int fd;
        try
        {
            fd = inotify_init1(InNonBlock | InCloseOnExec);
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            failure = ex.Message;
            return null;
        }

        if (fd < 0)
        {
            failure = $"inotify_init1 failed (errno {Marshal.GetLastPInvokeError()})";
            return null;
        }

        var wake = eventfd(0, EventNonBlockCloseOnExec);
        if (wake < 0)
        {
            failure = $"eventfd failed (errno {Marshal.GetLastPInvokeError()})";
            close(fd);
            return null;
        }

        var watcher = new InotifyWatcher(catalog, options, root, fd, wake);
        if (!watcher.AddWatches("", out failure))
        {
            watcher.Dispose();
            return null;
        }

        watcher._thread.Start();
        return watcher;
    }

    /// <summary>The root this instance watches, every link resolved.</summary>
    public string Root => _root;

    /// <summary>True while a writer is known to have <paramref name="relative"/> open, or wrote it and has not settled.</summary>
    public bool IsBeingWritten(string relative) => _writing.ContainsKey(relative);

    public void Dispose()
    {
        _stopping = true;
        if (_thread.IsAlive && Thread.CurrentThread != _thread)
        {
            Wake();
            _thread.Join();
        }

        lock (_events)
        {
            // Under the lock: the publisher may be reading events, and the number could be reused.
            if (_closed)
            {
                return;
            }

            _closed = true;
            _queued.Clear();
            close(_fd);

            // The thread has ended (or never started), so nothing waits on it any more.
            close(_wake);
        }
    }

    /// <summary>
    /// For the publisher: the paths queued since the last batch (none once this watcher is
    /// disposed), and from now until the check is disposed,
    /// <see cref="WriterCheck.StillSettled"/> says whether a path is still as quiet as it is now.
    /// </summary>
    public WriterCheck TakeBatch()
    {
        lock (_events)
        {
            Drain();
            List<ChangedPath> batch = [.. _queued.Values];
            _queued.Clear();
            _batchPosted = false;
            _touched = new HashSet<string>(StringComparer.Ordinal);
            return new WriterCheck(this, batch);
        }
    }

    /// <summary>Paths the publisher left at their previous version because they changed while read: they wait for their writer again.</summary>
    public void Defer(IReadOnlyList<ChangedPath> deferred)
    {
        lock (_events)
        {
            var now = Environment.TickCount64;
            foreach (var change in deferred)
            {
                _writing.AddOrUpdate(change.Relative, new Writing(now, now), (_, w) => w with { Last = now });
            }

            if (deferred.Count > 0 && !_closed)
            {
                // The thread may be asleep with nothing to settle: it has now.
                Wake();
            }
        }
    }

    /// <summary>The publisher's question to the watcher while it takes in a batch: has a writer come back to a path?</summary>
    internal sealed class WriterCheck(InotifyWatcher watcher, IReadOnlyList<ChangedPath> batch) : IDisposable
    {
        /// <summary>The paths to take in.</summary>
        public IReadOnlyList<ChangedPath> Batch => batch;

        /// <summary>
        /// True when no event named <paramref name="relative"/> since the check began, no writer is
        /// known to be at it, and the kernel does not say it is open for writing: not taken while
        /// a writer has it open either, since the event of a truncation (cp's O_TRUNC) can come
        /// after the read, and even after the margin when the writer is starved of CPU, so an
        /// empty file read now may be a truncation under way.
        /// </summary>
        public bool StillSettled(string relative)
        {
            lock (watcher._events)
            {
                watcher.Drain();
                if (watcher._touched?.Contains(relative) != false || watcher._writing.ContainsKey(relative))
                {
                    return false;
                }
            }

            return watcher.IsOpenForWriting(relative) != true;
        }

        public void Dispose()
        {
            lock (watcher._events)
            {
                watcher._touched = null;
            }
        }
    }

    private void Run()
    {
        var timeout = -1;
        while (!_stopping)
        {
            if (Wait(timeout))
            {
                // Events come one at a time while files are opened in a row (the server's own
                // index reads each file: two events apiece), and the thread would wake for each:
                // a moment's wait takes them in batches. It delays nothing that waits on it by
                // more than that: publication waits out the coalescing delay anyway, and the
                // publisher reads what is pending itself before it publishes.
                Thread.Sleep(EventBatchMs);
            }

            lock (_events)
            {
                Drain();
                var now = Environment.TickCount64;
                Settle(now);
                if (_queued.Count > 0 && now - _firstQueuedAt >= (long)_options.CoalescingDelay.TotalMilliseconds)
                {
                    Flush();
                }

                timeout = NextTimeout(now);
            }
        }
    }

    /// <summary>
    /// How long the thread may wait for the next event, in milliseconds (-1: until one comes):
    /// while files are being written, <see cref="PollTimeoutMs"/>, to apply the settle rule;
    /// while paths are queued and not yet posted, until the coalescing delay ends; else no time
    /// limit, so an idle server's watcher does not wake at all.
    /// </summary>
    private int NextTimeout(long now)
    {
        if (!_writing.IsEmpty)
        {
            return PollTimeoutMs;
        }

        if (_queued.Count > 0 && !_batchPosted)
        {
            // A posted batch takes whatever is queued when the publisher comes to it.
            return (int)Math.Clamp(_firstQueuedAt + (long)_options.CoalescingDelay.TotalMilliseconds - now, 1, int.MaxValue);
        }

        return -1;
    }

    /// <summary>Waits for an event, a wake or the timeout; true when events are waiting.</summary>
    private unsafe bool Wait(int timeout)
    {
        var fds = stackalloc PollFd[2];
        fds[0] = new PollFd { Fd = _fd, Events = PollIn };
        fds[1] = new PollFd { Fd = _wake, Events = PollIn };
        if (poll(fds, 2, timeout) <= 0)
        {
            return false;
        }

        if (fds[1].Revents != 0)
        {
            ulong count;
            read(_wake, (byte*)&count, sizeof(ulong));
        }

        return fds[0].Revents != 0 && !_stopping;
    }

    private unsafe void Wake()
    {
        ulong one = 1;
        write(_wake, (byte*)&one, sizeof(ulong));
    }

    private void Flush()
    {
        if (!_batchPosted)
        {
            _batchPosted = true;
            _catalog.Post(this);
        }
    }

    private void Queue(string relative, bool isDirectory, long now)
    {
        if (_queued.Count == 0)
        {
            _firstQueuedAt = now;
        }

        _queued[relative] = _queued.TryGetValue(relative, out var queued) ? queued with { IsDirectory = queued.IsDirectory || isDirectory } : new ChangedPath(relative, isDirectory);
    }
}
