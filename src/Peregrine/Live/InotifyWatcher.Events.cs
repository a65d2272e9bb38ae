using System.Runtime.InteropServices;
using System.Text;
using static Peregrine.Interop.Libc;

namespace Peregrine.Live;

/// <summary>The events: read from the descriptor, and what each means for the files and folders it names.</summary>
internal sealed partial class InotifyWatcher
{
    internal const uint InModify = 0x2;
    internal const uint InAttrib = 0x4;
    internal const uint InCloseWrite = 0x8;
    internal const uint InCloseNoWrite = 0x10;
    internal const uint InOpen = 0x20;
    internal const uint InMovedFrom = 0x40;
    internal const uint InMovedTo = 0x80;
    internal const uint InCreate = 0x100;
    internal const uint InDelete = 0x200;
    internal const uint InDeleteSelf = 0x400;
    internal const uint InMoveSelf = 0x800;
    internal const uint InQueueOverflow = 0x4000;
    internal const uint InIgnored = 0x8000;
    internal const uint InOnlyDir = 0x0100_0000;
    internal const uint InDontFollow = 0x0200_0000;
    internal const uint InExclUnlink = 0x0400_0000;
    internal const uint InIsDir = 0x4000_0000;
    internal const int InNonBlock = 0x800;
    internal const int InCloseOnExec = 0x80000;
    private const int PollTimeoutMs = 20;
    private const int EventBatchMs = 5;

    private const uint Mask = InModify | InAttrib | InCloseWrite | InCloseNoWrite | InOpen | InMovedFrom | InMovedTo | InCreate | InDelete
        | InDeleteSelf | InMoveSelf | InOnlyDir | InDontFollow | InExclUnlink;

    /// <summary>Reads every event waiting, without blocking.</summary>
    private unsafe void Drain()
    {
        if (_closed)
        {
            return;
        }

        var handled = false;
        fixed (byte* buffer = _buffer)
        {
            while (true)
            {
                var count = read(_fd, buffer, (nuint)_buffer.Length);
                if (count <= 0)
                {
                    if (handled && Thread.CurrentThread != _thread)
                    {
                        // The publisher read these (TakeBatch, StillSettled): what they queued or
                        // left settling is the watcher thread's to follow, and it may be asleep
                        // with nothing left on the descriptor to wake it.
                        Wake();
                    }

                    return;
                }

                handled = true;

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
}
