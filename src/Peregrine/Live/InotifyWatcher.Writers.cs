using System.Runtime.InteropServices;
using Peregrine.Sources;
using static Peregrine.Interop.Libc;

namespace Peregrine.Live;

/// <summary>
/// Writers that never close (see the class's remarks): the settle rule and the open-write limit,
/// and asking the kernel whether a file is open for writing.
/// </summary>
internal sealed partial class InotifyWatcher
{
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
                _catalog.Post(_root, [new ChangedPath(path, false)]);
            }
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
}
