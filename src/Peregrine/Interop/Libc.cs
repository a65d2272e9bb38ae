using System.Runtime.InteropServices;

// Interop: every call into the C library, in one place, with the constants of the headers it
// takes them from. The callers decide what a failure means; nothing here retries or throws.
// Whether the Linux-only calls are made at all is PlatformParts' decision, not the caller's.
//
// Most of Linux's constants and layouts are the same on x86-64 and arm64 (both take the generic
// tables); the few that are not are chosen by the architecture the process runs on, through a
// method that names the architecture (…On(Architecture)), so that tests can check both from one
// machine. tests/Peregrine.Tests/Platform/LibcAbiTests compiles a C probe with clang for
// x86_64-linux-gnu and aarch64-linux-gnu and compares every value here with its headers'.

namespace Peregrine.Interop;

/// <summary>The C library's calls that .NET does not wrap: inotify(7), leases, flock(2), copies in the kernel, stat(2), realpath(3), thread scheduling, sealed memory files, sendfile(2) and sendmsg(2), epoll(7), accept4(2), malloc_trim(3) and mallopt(3), dlopen(3)'s look-up, madvise(2) and getauxval(3).</summary>
internal static partial class Libc
{
    /// <summary>EAGAIN (EWOULDBLOCK) on Linux.</summary>
    public const int TryAgain = 11;

    // :: inotify(7)

    [LibraryImport("libc", SetLastError = true)]
    public static partial int inotify_init1(int flags);

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int inotify_add_watch(int fd, string path, uint mask);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int inotify_rm_watch(int fd, int wd);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint read(int fd, byte* buffer, nuint count);

    /// <summary>POLLIN, from poll.h.</summary>
    public const short PollIn = 1;

    [StructLayout(LayoutKind.Sequential)]
    public struct PollFd
    {
        public int Fd;
        public short Events;
        public short Revents;
    }

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int poll(PollFd* fds, nuint count, int timeout);

    [LibraryImport("libc")]
    public static partial int close(int fd);

    /// <summary>EFD_NONBLOCK | EFD_CLOEXEC, from sys/eventfd.h.</summary>
    public const int EventNonBlockCloseOnExec = 0x800 | 0x80000;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int eventfd(uint initialValue, int flags);

    // :: fcntl(2) leases: F_SETLEASE and its F_RDLCK / F_UNLCK arguments, F_SETSIG, and SIGURG.

    public const int SetLease = 1024;
    public const int SetSignal = 10;
    public const int UrgentSignal = 23;
    public const int ReadLock = 0;
    public const int Unlock = 2;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int fcntl(int fd, int command, int argument);

    // :: flock(2): LOCK_EX and LOCK_NB, the same on Linux and macOS, on a descriptor from open(2).

    public const int LockExclusive = 2;
    public const int LockNonBlocking = 4;

    /// <summary>EWOULDBLOCK: flock's answer while another holds the lock.</summary>
    public static int WouldBlock => OperatingSystem.IsLinux() ? TryAgain : 35;

    /// <summary>O_RDONLY.</summary>
    public const int OpenReadOnly = 0;

    /// <summary>O_DIRECTORY for this process: Linux's for its architecture, 0x100000 on macOS and the BSDs.</summary>
    public static readonly int OpenDirectory = OperatingSystem.IsLinux() ? OpenDirectoryOn(RuntimeInformation.ProcessArchitecture) : 0x100000;

    /// <summary>
    /// O_DIRECTORY on Linux: 0200000 (0x10000) in the generic table that x86-64 uses, 040000
    /// (0x4000) on Arm (arm64 and 32-bit) and ppc64le. On those, 0x10000 is O_DIRECT, which a
    /// folder refuses (EINVAL).
    /// </summary>
    public static int OpenDirectoryOn(Architecture architecture)
        => architecture is Architecture.Arm64 or Architecture.Arm or Architecture.Armv6 or Architecture.Ppc64le ? 0x4000 : 0x10000;

    /// <summary>O_CLOEXEC: 02000000 on Linux, 0x1000000 on macOS.</summary>
    public static int OpenCloseOnExec => OperatingSystem.IsLinux() ? 0x80000 : 0x1000000;

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int open(string path, int flags);

    /// <summary>open(2) with a mode, for flags that create a file.</summary>
    [LibraryImport("libc", EntryPoint = "open", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int open(string path, int flags, uint mode);

    /// <summary>O_RDWR.</summary>
    public const int OpenReadWrite = 2;

    /// <summary>O_WRONLY.</summary>
    public const int OpenWriteOnly = 1;

    /// <summary>fchmod(2): a file's mode, through a descriptor of any access.</summary>
    [LibraryImport("libc", SetLastError = true)]
    public static partial int fchmod(int fd, uint mode);

    /// <summary>POSIX_FADV_DONTNEED: a file's clean pages that nothing holds leave the page cache.</summary>
    public const int AdviseDontNeed = 4;

    /// <summary>posix_fadvise(2); returns the error number, 0 for none, rather than setting errno.</summary>
    [LibraryImport("libc")]
    public static partial int posix_fadvise(int fd, long offset, long length, int advice);

    /// <summary>O_TMPFILE for this process (Linux only): an unnamed file in the folder given.</summary>
    public static readonly int OpenUnnamed = OpenUnnamedOn(RuntimeInformation.ProcessArchitecture);

    /// <summary>O_TMPFILE on Linux: __O_TMPFILE (020000000, the same on x86-64 and arm64) | O_DIRECTORY, which is not.</summary>
    public static int OpenUnnamedOn(Architecture architecture) => 0x400000 | OpenDirectoryOn(architecture);

    /// <summary>TMPFS_MAGIC, statfs(2)'s f_type for tmpfs, whose files are memory files.</summary>
    public const long TmpfsMagic = 0x01021994;

    /// <summary>fstatfs(2); f_type is the first field, a long, on x86-64 and arm64 (struct statfs is 120 bytes there; give it <see cref="StatBufferSize"/>).</summary>
    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int fstatfs(int fd, byte* buffer);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int flock(int fd, int operation);

    // :: copies in the kernel: FICLONE, _IOW(0x94, 9, int), from linux/fs.h; copy_file_range(2).

    public const nuint Ficlone = 0x40049409;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int ioctl(int fd, nuint request, int sourceFd);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint copy_file_range(int fdIn, long* offIn, int fdOut, long* offOut, nuint length, uint flags);

    // :: stat(2), whose buffer the caller reads by the layout of its architecture; realpath(3).

    /// <summary>The bytes a caller gives stat(2), fstat(2) and fstatfs(2): more than struct stat (144 bytes on x86-64, 128 on arm64) and struct statfs (120) take.</summary>
    public const int StatBufferSize = 256;

    /// <summary>Where struct stat's fields lie on Linux: x86-64 has {dev, ino, nlink (8 bytes), mode}, arm64 (the generic layout) {dev, ino, mode, nlink (4 bytes)}; the rest meet again at st_rdev's end.</summary>
    /// <param name="Device">st_dev, 8 bytes.</param>
    /// <param name="Inode">st_ino, 8 bytes.</param>
    /// <param name="Mode">st_mode, 4 bytes; -1 where the layout is not known here (the caller asks .NET instead).</param>
    /// <param name="Size">st_size, 8 bytes.</param>
    /// <param name="ModifiedSeconds">st_mtim.tv_sec, 8 bytes.</param>
    /// <param name="ModifiedNanoseconds">st_mtim.tv_nsec, 8 bytes.</param>
    public readonly record struct StatLayout(int Device, int Inode, int Mode, int Size, int ModifiedSeconds, int ModifiedNanoseconds)
    {
        /// <summary>The layout of this process's architecture.</summary>
        public static readonly StatLayout Current = On(RuntimeInformation.ProcessArchitecture);

        public bool IsKnown => Mode >= 0;

        public static StatLayout On(Architecture architecture) => architecture switch
        {
            Architecture.X64 => new(0, 8, 24, 48, 88, 96),
            Architecture.Arm64 => new(0, 8, 16, 48, 88, 96),
            _ => new(0, 8, -1, 48, 88, 96),
        };
    }

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    public static unsafe partial int stat(string path, byte* buffer);

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    public static unsafe partial int lstat(string path, byte* buffer);

    [LibraryImport("libc")]
    public static unsafe partial int fstat(int descriptor, byte* buffer);

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    public static partial nint realpath(string path, nint resolved);

    [LibraryImport("libc")]
    public static partial void free(nint pointer);

    /// <summary>A hard link: the bucket copy's unchanged files are shared between version folders.</summary>
    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int link(string oldPath, string newPath);

    /// <summary>rename(2), which replaces <paramref name="newPath"/> atomically, a symbolic link included.</summary>
    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int rename(string oldPath, string newPath);

    // :: scheduling of the calling thread: gettid(2), sched_setscheduler(2) with SCHED_IDLE, and
    // setpriority(2) with PRIO_PROCESS, which on Linux names one thread by its tid.

    public const int SchedIdle = 5;
    public const int PrioProcess = 0;

    [LibraryImport("libc")]
    public static partial int gettid();

    /// <summary><paramref name="priority"/> is the only field of <c>struct sched_param</c>; 0 for SCHED_IDLE.</summary>
    [LibraryImport("libc")]
    public static partial int sched_setscheduler(int pid, int policy, ref int priority);

    [LibraryImport("libc")]
    public static partial int setpriority(int which, int who, int priority);

    // :: cachestat(2), Linux 6.5, which glibc does not wrap: how many of a file's pages are cached.
    // Its number is 451 on every architecture (the generic table).

    [StructLayout(LayoutKind.Sequential)]
    public struct CachestatRange
    {
        public ulong Offset;
        public ulong Length;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Cachestat
    {
        public ulong Cached;
        public ulong Dirty;
        public ulong Writeback;
        public ulong Evicted;
        public ulong RecentlyEvicted;
    }

    private const nint CachestatNumber = 451;

    [LibraryImport("libc", EntryPoint = "syscall", SetLastError = true)]
    private static unsafe partial int Syscall(nint number, int fd, CachestatRange* range, Cachestat* stat, uint flags);

    public static unsafe int cachestat(int fd, CachestatRange* range, Cachestat* stat, uint flags) => Syscall(CachestatNumber, fd, range, stat, flags);

    // :: malloc_trim(3), glibc's: free pages of every arena back to the system.

    [LibraryImport("libc")]
    public static partial int malloc_trim(nuint pad);

    /// <summary>M_ARENA_MAX, glibc's: the most arenas malloc makes (by default, eight per CPU).</summary>
    public const int ArenaMax = -8;

    [LibraryImport("libc")]
    public static partial int mallopt(int parameter, int value);

    // :: dlopen(3) with RTLD_NOLOAD: whether a shared library is already in the process.

    /// <summary>RTLD_LAZY and RTLD_NOLOAD.</summary>
    internal const int LoadLazy = 0x1;
    internal const int LoadNoLoad = 0x4;

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    private static partial nint dlopen(string file, int mode);

    [LibraryImport("libc")]
    private static partial int dlclose(nint handle);

    /// <summary>True when <paramref name="soname"/> is loaded in this process; never loads it.</summary>
    public static bool IsLoaded(string soname)
    {
        var handle = dlopen(soname, LoadLazy | LoadNoLoad);
        if (handle == 0)
        {
            return false;
        }

        // RTLD_NOLOAD still takes a reference on a library it finds.
        dlclose(handle);
        return true;
    }

    // :: madvise(2) MADV_DONTNEED, and getauxval(3) AT_PHDR: where the executable's program headers were loaded.

    public const int DontNeed = 4;
    public const ulong AuxProgramHeaders = 3;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int madvise(nint address, nuint length, int advice);

    [LibraryImport("libc")]
    public static partial nuint getauxval(ulong type);
}
