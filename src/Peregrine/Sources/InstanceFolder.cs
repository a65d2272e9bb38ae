using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using static Peregrine.Interop.Libc;

namespace Peregrine.Sources;

/// <summary>
/// A folder that belongs to one running process, made under a parent that other processes share
/// (the temp folder): several servers run side by side on one host, on one root or on several,
/// and one started later must never remove or write what an earlier one is still using.
/// </summary>
/// <remarks>
/// <para>
/// Ownership is an exclusive <c>flock(2)</c> on the folder itself, held for the process's life:
/// the kernel drops it when the process ends however it ends (SIGKILL, a crash; a machine that
/// lost power has no process left), and a process that is stopped or slow still holds it. The
/// lock is on the folder, not on a file in it, so nothing can part the two (a temp cleaner that
/// ages out an untouched file, say), and <c>systemd-tmpfiles</c> leaves a locked folder alone. It
/// is taken with <c>flock</c> itself, not through .NET's <see cref="FileShare.None"/>, which takes
/// no lock at all when <c>System.IO.DisableFileLocking</c> is set (as the server sets it).
/// </para>
/// <para>
/// A folder is made under a staging name, locked, and only then renamed to its final name, so a
/// folder under the final name is locked while its owner lives. Whichever process finds a folder,
/// staging or final, whose lock it can take removes it under that lock; the maker of a staging
/// folder removed so, between its <c>mkdir</c> and its lock, makes another. Where the file system
/// takes no locks (some NFS and FUSE mounts), a folder is used unlocked and no process removes any
/// folder there: leftovers stay rather than risk a live server's.
/// </para>
/// <para>
/// On Windows, where a folder cannot be locked, a lock file in it is held open without sharing,
/// which the system enforces, and deleted when closed.
/// </para>
/// </remarks>
internal sealed class InstanceFolder : IDisposable
{
    private const string StagingMark = ".staging-";
    private const string WindowsLockName = ".lock";
    private const int Attempts = 3;

    private readonly SafeFileHandle? _lock;

    private InstanceFolder(string path, SafeFileHandle? lockHandle)
    {
        Path = path;
        _lock = lockHandle;
    }

    /// <summary>The folder's full path.</summary>
    public string Path { get; }

    /// <summary>False where the file system takes no locks: the folder is used unlocked.</summary>
    public bool IsLocked => _lock is not null;

    /// <summary>
    /// Removes the folders under <paramref name="parent"/> named <paramref name="prefix"/>… whose
    /// owners are gone, then makes one of this process's own (mode 0700), locked until
    /// <see cref="Dispose"/>.
    /// </summary>
    /// <exception cref="IOException">The folder could not be made.</exception>
    /// <exception cref="UnauthorizedAccessException">The parent is not writable.</exception>
    public static InstanceFolder Create(string parent, string prefix) => Create(parent, prefix, NewName(prefix));

    /// <summary>
    /// A name for a folder of this process's own, <paramref name="prefix"/> then the process id
    /// and a random part: for a caller that must give out the folder's path before it can make it.
    /// </summary>
    public static string NewName(string prefix)
        => prefix + Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture) + "-" + Guid.NewGuid().ToString("N")[..12];

    /// <summary>How a new folder is opened and locked: <see cref="TryLock"/>, or in a test one that fails as open(2) can.</summary>
    internal delegate SafeFileHandle? LockAttempt(string folder, out bool lockable);

    /// <summary>
    /// As <see cref="Create(string, string)"/>, under the name <paramref name="name"/> (from
    /// <see cref="NewName"/> with the same prefix).
    /// </summary>
    /// <exception cref="IOException">The folder could not be made or locked; nothing is left behind.</exception>
    /// <exception cref="UnauthorizedAccessException">The parent is not writable.</exception>
    internal static InstanceFolder Create(string parent, string prefix, string name, LockAttempt? tryLock = null)
    {
        Directory.CreateDirectory(parent);
        RemoveAbandoned(parent, prefix);
        var final = System.IO.Path.Combine(parent, name);
        for (var attempt = 1; ; attempt++)
        {
            try
            {
                if (OperatingSystem.IsWindows())
                {
                    return CreateOnWindows(final);
                }

                var staging = System.IO.Path.Combine(parent, StagingMark + name + "-" + attempt.ToString(System.Globalization.CultureInfo.InvariantCulture));
                return CreateLocked(staging, final, tryLock ?? TryLock);
            }
            catch (IOException) when (attempt < Attempts)
            {
                // Another process's start-up took the staging folder for abandoned in the moment
                // between its mkdir and its lock, and removed it; or the lock was refused, and
                // the folder removed. A new staging name each time.
            }
        }
    }

    /// <summary>Removes the folder and everything in it, then lets its lock go.</summary>
    public void Dispose()
    {
        if (OperatingSystem.IsWindows())
        {
            // The lock file is deleted as it closes; the folder is empty of it only then.
            _lock?.Dispose();
            TryDelete(Path);
            return;
        }

        TryDelete(Path);
        _lock?.Dispose();
    }

    /// <summary>Removes the folders of processes that ended without removing theirs (killed, crashed, the machine lost power).</summary>
    internal static void RemoveAbandoned(string parent, string prefix)
    {
        List<string> folders;
        try
        {
            folders = [.. Directory.EnumerateDirectories(parent, prefix + "*"), .. Directory.EnumerateDirectories(parent, StagingMark + prefix + "*")];
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return;
        }

        foreach (var folder in folders)
        {
            try
            {
                if (OperatingSystem.IsWindows())
                {
                    if (TakeOnWindows(folder) is { } lockFile)
                    {
                        // Its owner is gone; the lock file goes as it closes, then the folder.
                        lockFile.Dispose();
                        Directory.Delete(folder, recursive: true);
                    }

                    continue;
                }

                using var taken = TryLock(folder, out _);
                if (taken is not null)
                {
                    // Locked by nobody: its owner is gone. Removed while this process holds the
                    // lock, so no one else takes it for theirs meanwhile.
                    Directory.Delete(folder, recursive: true);
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Removed by another process first, or not ours to remove.
            }
        }
    }

    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    private static InstanceFolder CreateLocked(string staging, string final, LockAttempt tryLock)
    {
        // Readable by this user only: what the folder holds is this process's.
        Directory.CreateDirectory(staging, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        SafeFileHandle? handle;
        bool lockable;
        try
        {
            handle = tryLock(staging, out lockable);
        }
        catch (IOException)
        {
            // The folder this process just made cannot be opened to lock (refused flags, say, or
            // a descriptor limit): no other process can own it, so it goes now rather than
            // staying behind as a folder no later start can open to remove either.
            TryDelete(staging);
            throw;
        }

        if (handle is null && lockable)
        {
            // Locked by another process's start-up, which is removing it as abandoned.
            throw new IOException($"'{staging}' was taken by another process.");
        }

        try
        {
            // The lock is on the folder, not its name: it holds across the rename.
            Directory.Move(staging, final);
            return new InstanceFolder(final, handle);
        }
        catch
        {
            // Still this process's (locked, or on a file system without locks): removed under
            // the lock, then the lock goes.
            TryDelete(staging);
            handle?.Dispose();
            throw;
        }
    }

    /// <summary>
    /// The folder opened and exclusively locked; <see langword="null"/> when another process
    /// holds the lock (<paramref name="lockable"/> true) or the file system takes no locks (false).
    /// </summary>
    /// <exception cref="IOException">The folder cannot be opened (gone, say).</exception>
    private static SafeFileHandle? TryLock(string folder, out bool lockable)
    {
        var fd = open(folder, OpenReadOnly | OpenDirectory | OpenCloseOnExec);
        if (fd < 0)
        {
            throw new IOException($"Cannot open '{folder}' (errno {Marshal.GetLastPInvokeError()}).");
        }

        var handle = new SafeFileHandle(fd, ownsHandle: true);
        if (flock(fd, LockExclusive | LockNonBlocking) == 0)
        {
            lockable = true;
            return handle;
        }

        lockable = Marshal.GetLastPInvokeError() == WouldBlock;
        handle.Dispose();
        return null;
    }

    private static InstanceFolder CreateOnWindows(string final)
    {
        Directory.CreateDirectory(final);
        return new InstanceFolder(final, File.OpenHandle(System.IO.Path.Combine(final, WindowsLockName), FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None, FileOptions.DeleteOnClose));
    }

    /// <summary>The lock file of a folder whose owner is gone, opened; <see langword="null"/> while its owner holds it.</summary>
    private static SafeFileHandle? TakeOnWindows(string folder)
    {
        var lockPath = System.IO.Path.Combine(folder, WindowsLockName);
        try
        {
            return File.OpenHandle(lockPath, FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None, FileOptions.DeleteOnClose);
        }
        catch (IOException)
        {
            return null;
        }
    }

    private static void TryDelete(string folder)
    {
        try
        {
            Directory.Delete(folder, recursive: true);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Already gone; or left for the next process to find unlocked and remove.
        }
    }
}
