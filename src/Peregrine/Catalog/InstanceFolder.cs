using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using static Peregrine.Interop.Libc;

namespace Peregrine.Catalog;

/// <summary>
/// A folder that belongs to one running process, made under a parent that other processes share
/// (the temp folder): several servers run side by side on one host, on one root or on several,
/// and one started later must never remove or write what an earlier one is still using.
/// </summary>
/// <remarks>
/// <para>
/// Ownership is an exclusive <c>flock(2)</c> on a lock file inside the folder, held for the
/// process's life: the kernel drops it when the process ends however it ends (SIGKILL, a crash, a
/// lost machine has no process left), and a process that is stopped or slow still holds it. It
/// is taken with <c>flock</c> itself, not through .NET's <see cref="FileShare.None"/>, which takes
/// no lock at all when <c>System.IO.DisableFileLocking</c> is set (as the server sets it).
/// </para>
/// <para>
/// A folder is made under a staging name, locked, and only then renamed to its final name, so a
/// folder under the final prefix always has a held lock while its owner lives: there is no moment
/// in which another process could find it unlocked and take it for abandoned. A folder whose lock
/// can be taken belongs to no one and is removed, under that lock, by whichever process finds it;
/// a staging folder is removed once it is old enough that its maker cannot still be renaming it.
/// On Windows the lock file is created and opened without sharing in one call, which the system
/// enforces, so the folder is made under its final name.
/// </para>
/// </remarks>
internal sealed class InstanceFolder : IDisposable
{
    private const string LockName = ".lock";
    private const string StagingMark = ".staging-";

    /// <summary>How old a staging folder must be before it is taken for one left by a process that died while making it.</summary>
    internal static readonly TimeSpan StagingAge = TimeSpan.FromMinutes(1);

    private readonly SafeFileHandle _lock;

    private InstanceFolder(string path, SafeFileHandle lockHandle)
    {
        Path = path;
        _lock = lockHandle;
    }

    /// <summary>The folder's full path.</summary>
    public string Path { get; }

    /// <summary>
    /// Removes the folders under <paramref name="parent"/> named <paramref name="prefix"/>… whose
    /// owners are gone, then makes one of this process's own (mode 0700), locked until
    /// <see cref="Dispose"/>.
    /// </summary>
    /// <exception cref="IOException">The folder or its lock could not be made.</exception>
    /// <exception cref="UnauthorizedAccessException">The parent is not writable.</exception>
    public static InstanceFolder Create(string parent, string prefix)
    {
        Directory.CreateDirectory(parent);
        RemoveAbandoned(parent, prefix);

        var name = prefix + Environment.ProcessId.ToString(System.Globalization.CultureInfo.InvariantCulture) + "-" + Guid.NewGuid().ToString("N")[..12];
        var final = System.IO.Path.Combine(parent, name);
        if (OperatingSystem.IsWindows())
        {
            // Creating the lock file and denying it to others is one call there, and a folder
            // with an open file in it cannot be renamed.
            Directory.CreateDirectory(final);
            return new InstanceFolder(final, File.OpenHandle(System.IO.Path.Combine(final, LockName), FileMode.CreateNew, FileAccess.ReadWrite, FileShare.None));
        }

        var staging = System.IO.Path.Combine(parent, StagingMark + name);
        MakePrivateDirectory(staging);
        SafeFileHandle? handle = null;
        try
        {
            handle = OpenLocked(System.IO.Path.Combine(staging, LockName), FileMode.CreateNew)
                ?? throw new IOException($"The lock of '{staging}' was taken by another process.");

            // The lock is on the file, not its name: it holds across the rename.
            Directory.Move(staging, final);
            return new InstanceFolder(final, handle);
        }
        catch
        {
            handle?.Dispose();
            TryDelete(staging);
            throw;
        }
    }

    /// <summary>Removes the folder and everything in it, then lets its lock go.</summary>
    public void Dispose()
    {
        TryDelete(Path);
        _lock.Dispose();
    }

    /// <summary>Removes the folders of processes that ended without removing theirs (killed, crashed, the machine lost power).</summary>
    internal static void RemoveAbandoned(string parent, string prefix)
    {
        IEnumerable<string> folders;
        try
        {
            folders = Directory.EnumerateDirectories(parent, prefix + "*").Concat(Directory.EnumerateDirectories(parent, StagingMark + prefix + "*")).ToList();
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return;
        }

        foreach (var folder in folders)
        {
            try
            {
                if (System.IO.Path.GetFileName(folder).StartsWith(StagingMark, StringComparison.Ordinal))
                {
                    if (DateTime.UtcNow - Directory.GetLastWriteTimeUtc(folder) > StagingAge)
                    {
                        Directory.Delete(folder, recursive: true);
                    }

                    continue;
                }

                var lockPath = System.IO.Path.Combine(folder, LockName);
                if (!File.Exists(lockPath))
                {
                    // Every folder under the final name was locked before it was given that name:
                    // one without a lock file was half removed by a process that then died, or made
                    // by hand. Left alone while young, in case a process of an earlier layout is
                    // making it, as one without the staging step did.
                    if (DateTime.UtcNow - Directory.GetLastWriteTimeUtc(folder) > StagingAge)
                    {
                        Directory.Delete(folder, recursive: true);
                    }

                    continue;
                }

                using var handle = OpenLocked(lockPath, FileMode.Open);
                if (handle is not null)
                {
                    // Locked by nobody: its owner is gone. Removed while this process holds the lock,
                    // so no one else takes it for theirs meanwhile.
                    Directory.Delete(folder, recursive: true);
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Removed by another process first, or not ours to remove.
            }
        }
    }

    /// <summary>The lock file opened and exclusively locked; <see langword="null"/> when another process holds the lock.</summary>
    private static SafeFileHandle? OpenLocked(string path, FileMode mode)
    {
        if (OperatingSystem.IsWindows())
        {
            try
            {
                return File.OpenHandle(path, mode, FileAccess.ReadWrite, FileShare.None);
            }
            catch (IOException) when (mode == FileMode.Open && File.Exists(path))
            {
                return null;
            }
        }

        var handle = File.OpenHandle(path, mode, FileAccess.ReadWrite, FileShare.ReadWrite);
        if (flock((int)handle.DangerousGetHandle(), LockExclusive | LockNonBlocking) == 0)
        {
            return handle;
        }

        var errno = Marshal.GetLastPInvokeError();
        handle.Dispose();
        return errno == EWouldBlock ? null : throw new IOException($"flock of '{path}' failed (errno {errno}).");
    }

    [System.Runtime.Versioning.UnsupportedOSPlatform("windows")]
    private static void MakePrivateDirectory(string path)
        // Readable by this user only: what the folder holds is this process's.
        => Directory.CreateDirectory(path, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);

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

    private static int EWouldBlock => OperatingSystem.IsMacOS() || OperatingSystem.IsFreeBSD() ? 35 : TryAgain;
}
