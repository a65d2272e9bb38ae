using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;

namespace Peregrine.Tests.Sources;

/// <summary>
/// An exclusive flock(2) on a folder, as a running server holds on its own: what another
/// server's start-up must find and leave alone. A lock is per open of the folder, so one taken
/// here stops a server in this same process too.
/// </summary>
internal static class FolderLock
{
    public static SafeFileHandle Take(string folder)
    {
        var fd = open(folder, 0x10000 /* O_DIRECTORY */);
        Assert.True(fd >= 0, $"open {folder}: errno {Marshal.GetLastPInvokeError()}");
        var handle = new SafeFileHandle(fd, ownsHandle: true);
        Assert.True(flock(fd, 2 | 4 /* LOCK_EX | LOCK_NB */) == 0, $"flock {folder}: errno {Marshal.GetLastPInvokeError()}");
        return handle;
    }

    [DllImport("libc", SetLastError = true)]
    private static extern int open([MarshalAs(UnmanagedType.LPUTF8Str)] string path, int flags);

    [DllImport("libc", SetLastError = true)]
    private static extern int flock(int fd, int operation);
}
