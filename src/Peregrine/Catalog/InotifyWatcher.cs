using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using System.Text;

namespace Peregrine.Catalog;

/// <summary>
/// Watches a tree through inotify(7) directly, for what <see cref="FileSystemWatcher"/> does not
/// pass on: <c>IN_CLOSE_WRITE</c> (a writer is done) and <c>IN_MOVED_TO</c> (a file renamed into
/// place, whole). A file that is created or modified is held back as "being written" until its
/// writer closes it; only then is it read and published, so a half-written file is never
/// served and the previous version stays until the new one is whole.
/// </summary>
/// <remarks>
/// <para>
/// One thread reads the events (non-blocking descriptor, <c>poll(2)</c> with a short timeout so
/// that disposing needs no signal), coalesces them for <see cref="WatchOptions.CoalescingDelay"/>
/// and posts the paths they name to the catalog's publisher (<see cref="FileCatalog.Post"/>),
/// which reads each file and publishes the next snapshot. Before publishing, the publisher asks
/// (<see cref="BeginWriterCheck"/>) whether events came for a path during its read; the events
/// waiting are read then, under this watcher's own lock. A path written again meanwhile is left at
/// its previous version and handed back (<see cref="Defer"/>) to wait for its writer once more.
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
    private const uint InModify = 0x2;
    private const uint InAttrib = 0x4;
    private const uint InCloseWrite = 0x8;
    private const uint InCloseNoWrite = 0x10;
    private const uint InOpen = 0x20;
    private const uint InMovedFrom = 0x40;
    private const uint InMovedTo = 0x80;
    private const uint InCreate = 0x100;
    private const uint InDelete = 0x200;
    private const uint InDeleteSelf = 0x400;
    private const uint InMoveSelf = 0x800;
    private const uint InQueueOverflow = 0x4000;
    private const uint InIgnored = 0x8000;
    private const uint InOnlyDir = 0x0100_0000;
    private const uint InDontFollow = 0x0200_0000;
    private const uint InExclUnlink = 0x0400_0000;
    private const uint InIsDir = 0x4000_0000;
    private const int InNonBlock = 0x800;
    private const int InCloseOnExec = 0x80000;
    private const short PollIn = 1;
    private const int PollTimeoutMs = 20;

    private const uint Mask = InModify | InAttrib | InCloseWrite | InCloseNoWrite | InOpen | InMovedFrom | InMovedTo | InCreate | InDelete
        | InDeleteSelf | InMoveSelf | InOnlyDir | InDontFollow | InExclUnlink;

    private readonly FileCatalog _catalog;
    private readonly WatchOptions _options;
    private readonly bool _serveHiddenFiles;
    private readonly string _root;
    private readonly int _fd;
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
    private long _firstQueuedAt;
    private volatile bool _stopping;

    private InotifyWatcher(FileCatalog catalog, PeregrineOptions options, string root, int fd)
    {
        _catalog = catalog;
        _options = options.Watch;
        _serveHiddenFiles = options.ServeHiddenFiles;
        _root = root;
        _fd = fd;
        _thread = new Thread(Run) { IsBackground = true, Name = "Peregrine watcher" };
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
        if (!OperatingSystem.IsLinux())
        {
            failure = "inotify needs Linux";
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

        var watcher = new InotifyWatcher(catalog, options, root, fd);
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
            _thread.Join();
        }

        lock (_events)
        {
            // Under the lock: the publisher may be reading events, and the number could be reused.
            _closed = true;
            close(_fd);
        }
    }

    /// <summary>
    /// For the publisher, before it reads a batch this watcher posted: from now until the check is
    /// disposed, <see cref="WriterCheck.StillSettled"/> says whether a path is still as quiet as
    /// when it was posted.
    /// </summary>
    public WriterCheck BeginWriterCheck()
    {
        lock (_events)
        {
            _touched = new HashSet<string>(StringComparer.Ordinal);
        }

        return new WriterCheck(this);
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
        }
    }

    /// <summary>The publisher's question to the watcher while it takes in a batch: has a writer come back to a path?</summary>
    internal sealed class WriterCheck(InotifyWatcher watcher) : IDisposable
    {
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
        while (!_stopping)
        {
            Wait();
            lock (_events)
            {
                Drain();
                var now = Environment.TickCount64;
                Settle(now);
                if (_queued.Count > 0 && now - _firstQueuedAt >= (long)_options.CoalescingDelay.TotalMilliseconds)
                {
                    Flush();
                }
            }
        }
    }

    private unsafe void Wait()
    {
        var pollFd = new PollFd { Fd = _fd, Events = PollIn };
        poll(&pollFd, 1, PollTimeoutMs);
    }

    /// <summary>Queues the files whose writers went quiet, and snapshots of files written for too long.</summary>
    private void Settle(long now)
    {
        if (_writing.IsEmpty)
        {
            return;
        }

        var settle = (long)_options.SettleTime.TotalMilliseconds;
        var limit = (long)_options.OpenWriteLimit.TotalMilliseconds;
        foreach (var (path, writing) in _writing)
        {
            if (now - writing.Last >= settle)
            {
                if (IsOpenForWriting(path) ?? _open.ContainsKey(path))
                {
                    // Quiet but still open (a writer that truncated it and paused): asked again
                    // after another settle time, up to the open-write limit.
                    _writing[path] = writing with { Last = now };
                    continue;
                }

                _open.Remove(path);
                _writing.TryRemove(path, out _);
                Queue(path, isDirectory: false, now);
            }
            else if (now - writing.Since >= limit)
            {
                // A log: publish what it holds now if it holds still while read (the length and
                // time check), and wait another limit before the next snapshot.
                _writing[path] = writing with { Since = now };
                _catalog.Post(_root, [new ChangedPath(path, false)], watcher: null);
            }
        }
    }

    private void Flush()
    {
        var batch = _queued.Values.ToList();
        _queued.Clear();
        _catalog.Post(_root, batch, this);
    }

    private void Queue(string relative, bool isDirectory, long now)
    {
        if (_queued.Count == 0)
        {
            _firstQueuedAt = now;
        }

        _queued[relative] = _queued.TryGetValue(relative, out var queued) ? queued with { IsDirectory = queued.IsDirectory || isDirectory } : new ChangedPath(relative, isDirectory);
    }

    /// <summary>Reads every event waiting, without blocking.</summary>
    private unsafe void Drain()
    {
        if (_closed)
        {
            return;
        }

        fixed (byte* buffer = _buffer)
        {
            while (true)
            {
                var count = read(_fd, buffer, (nuint)_buffer.Length);
                if (count <= 0)
                {
                    return;
                }

                var now = Environment.TickCount64;
                var offset = 0;
                while (offset + 16 <= count)
                {
                    var wd = *(int*)(buffer + offset);
                    var mask = *(uint*)(buffer + offset + 4);
                    var length = (int)*(uint*)(buffer + offset + 12);
                    var name = new ReadOnlySpan<byte>(buffer + offset + 16, length);
                    var end = name.IndexOf((byte)0);
                    Handle(wd, mask, end < 0 ? name : name[..end], now);
                    offset += 16 + length;
                }
            }
        }
    }

    private void Handle(int wd, uint mask, ReadOnlySpan<byte> rawName, long now)
    {
        if ((mask & InQueueOverflow) != 0)
        {
            // Events were lost: only a rescan can tell what changed, and opens may have lost their closes.
            _open.Clear();
            _catalog.RequestRefresh();
            return;
        }

        if (!_folders.TryGetValue(wd, out var folder))
        {
            return;
        }

        if ((mask & InIgnored) != 0)
        {
            _folders.Remove(wd);
            if (_watches.TryGetValue(folder, out var current) && current == wd)
            {
                _watches.Remove(folder);
            }

            return;
        }

        if (rawName.IsEmpty)
        {
            if ((mask & (InDeleteSelf | InMoveSelf)) != 0 && folder.Length == 0)
            {
                // The root itself went: the catalog's root check finds what replaced it.
                _catalog.RequestRefresh();
            }

            return;
        }

        var name = Encoding.UTF8.GetString(rawName);
        if ((name[0] == '.' && !_serveHiddenFiles && name != ".well-known") || name.Contains('\uFFFD'))
        {
            // Not served (hidden, or a name that does not decode): editor swap files and .git churn cost nothing.
            return;
        }

        var relative = folder + "/" + name;
        if ((mask & (InOpen | InCloseNoWrite)) != 0 && (mask & InIsDir) == 0)
        {
            // Opened, or closed after reading: the bytes did not change (our own reads of a file
            // give these too, so they must not count as a change to it).
            CountOpen(relative, (mask & InOpen) != 0 ? 1 : -1);
            return;
        }

        _touched?.Add(relative);
        if ((mask & InIsDir) != 0)
        {
            if ((mask & (InDelete | InMovedFrom)) != 0)
            {
                RemoveWatches(relative);
            }

            if ((mask & (InCreate | InMovedTo)) != 0)
            {
                // Watched before it is scanned, so a file written into it meanwhile is not missed.
                AddWatches(relative, out _);
            }

            if ((mask & (InDelete | InMovedFrom | InCreate | InMovedTo)) != 0)
            {
                Queue(relative, isDirectory: true, now);
            }

            return;
        }

        if ((mask & (InCreate | InModify)) != 0)
        {
            _writing.AddOrUpdate(relative, new Writing(now, now), (_, w) => w with { Last = now });
        }

        if ((mask & (InCloseWrite | InMovedTo | InDelete | InMovedFrom)) != 0)
        {
            if ((mask & InCloseWrite) != 0)
            {
                CountOpen(relative, -1);
            }
            else
            {
                // Another file under the name now, or none: what was open belonged to the old one.
                _open.Remove(relative);
            }

            _writing.TryRemove(relative, out _);
            Queue(relative, isDirectory: false, now);
        }
        else if ((mask & InAttrib) != 0 && !_writing.ContainsKey(relative))
        {
            // touch(1), chmod(1): the time or the readability changed.
            Queue(relative, isDirectory: false, now);
        }
    }

    /// <summary>
    /// Whether any process has the file open for writing now, asked of the kernel: a read lease
    /// (<c>F_SETLEASE</c>) is refused with <c>EAGAIN</c> while the file is open for writing, and
    /// is released at once. <see langword="null"/> when no lease can be had (the server neither
    /// owns the file nor has <c>CAP_LEASE</c>, or the file system has no leases) or the file is
    /// gone: the caller goes by what the events said.
    /// </summary>
    private bool? IsOpenForWriting(string relative)
    {
        var path = _root + relative;
        if (FileSystemProbe.Probe(path, followLinks: false).Kind != FileKind.Regular)
        {
            // Never opened: a FIFO would block the watcher, and a link is not followed.
            return null;
        }

        try
        {
            using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            var fd = (int)handle.DangerousGetHandle();

            // A writer opening the file while the lease is held breaks it, and the kernel tells
            // the holder with a signal, SIGIO unless set: SIGIO would end the process, SIGURG is
            // ignored. The writer waits only until the lease is released, a moment later.
            fcntl(fd, SetSignal, UrgentSignal);
            if (fcntl(fd, SetLease, ReadLock) == 0)
            {
                fcntl(fd, SetLease, Unlock);
                return false;
            }

            return Marshal.GetLastPInvokeError() == TryAgain ? true : null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }
    }

    private void CountOpen(string relative, int change)
    {
        var count = _open.GetValueOrDefault(relative) + change;
        if (count > 0)
        {
            _open[relative] = count;
        }
        else
        {
            // A close whose open came before the watch leaves nothing behind either.
            _open.Remove(relative);
        }
    }

    /// <summary>Watches a folder and every folder under it (not hidden ones, and not through links).</summary>
    private bool AddWatches(string relative, out string? failure)
    {
        failure = null;
        var pending = new Stack<string>();
        pending.Push(relative);
        while (pending.TryPop(out var folder))
        {
            var wd = inotify_add_watch(_fd, _root + folder, Mask);
            if (wd < 0)
            {
                var errno = Marshal.GetLastPInvokeError();
                if (errno == 28)
                {
                    // ENOSPC: the watch limit (fs.inotify.max_user_watches) is reached.
                    failure = $"the inotify watch limit is reached (fs.inotify.max_user_watches) at {_root + folder}";
                    return false;
                }

                // Gone already, or a link (IN_DONT_FOLLOW): nothing to watch.
                continue;
            }

            _folders[wd] = folder;
            _watches[folder] = wd;
            try
            {
                foreach (var name in new System.IO.Enumeration.FileSystemEnumerable<string>(
                    _root + folder,
                    static (ref System.IO.Enumeration.FileSystemEntry entry) => entry.FileName.ToString(),
                    new EnumerationOptions { IgnoreInaccessible = true, AttributesToSkip = FileAttributes.ReparsePoint })
                {
                    ShouldIncludePredicate = static (ref System.IO.Enumeration.FileSystemEntry entry) => entry.IsDirectory,
                })
                {
                    if (name[0] != '.' || _serveHiddenFiles || name == ".well-known")
                    {
                        pending.Push(folder + "/" + name);
                    }
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Removed while being walked: its own event takes it out.
            }
        }

        return true;
    }

    /// <summary>Stops watching a folder that went or moved away, and everything under it.</summary>
    private void RemoveWatches(string relative)
    {
        var prefix = relative + "/";
        foreach (var (folder, wd) in _watches.ToList())
        {
            if (folder == relative || folder.StartsWith(prefix, StringComparison.Ordinal))
            {
                // A watch follows its folder: left on a folder moved out of the tree, it would
                // report events under a path that no longer names it.
                inotify_rm_watch(_fd, wd);
                _watches.Remove(folder);
                _folders.Remove(wd);
            }
        }
    }

    [StructLayout(LayoutKind.Sequential)]
    private struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }

    [LibraryImport("libc", SetLastError = true)]
    private static partial int inotify_init1(int flags);

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    private static partial int inotify_add_watch(int fd, string path, uint mask);

    [LibraryImport("libc", SetLastError = true)]
    private static partial int inotify_rm_watch(int fd, int wd);

    [LibraryImport("libc", SetLastError = true)]
    private static unsafe partial nint read(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", SetLastError = true)]
    private static unsafe partial int poll(PollFd* fds, nuint count, int timeout);

    [LibraryImport("libc")]
    private static partial int close(int fd);

    // F_SETLEASE and its F_RDLCK / F_UNLCK arguments, F_SETSIG (fcntl(2)), SIGURG and EAGAIN.
    private const int SetLease = 1024;
    private const int SetSignal = 10;
    private const int UrgentSignal = 23;
    private const int ReadLock = 0;
    private const int Unlock = 2;
    private const int TryAgain = 11;

    [LibraryImport("libc", SetLastError = true)]
    private static partial int fcntl(int fd, int command, int argument);
}
