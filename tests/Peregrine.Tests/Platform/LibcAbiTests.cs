using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using System.Text;
using System.Text.RegularExpressions;
using Peregrine.Interop;
using Peregrine.Live;
using Peregrine.Sources;
using Peregrine.Tests.Infrastructure;
using Peregrine.Http1;
using Cpu = System.Runtime.InteropServices.Architecture;

namespace Peregrine.Tests.Platform;

/// <summary>
/// Every C library constant and layout the code uses (Interop/Libc, and the few masks kept
/// beside their one caller), checked against the C headers of both Linux architectures the
/// server ships for, from this one machine: a probe is compiled with clang for x86_64-linux-gnu
/// and for aarch64-linux-gnu (Debian's libc6-dev-arm64-cross), to assembly only, whose data
/// holds each value; nothing is linked or run. A value that differs by architecture is asked of
/// its …On(Architecture) method for the architecture compiled for.
/// </summary>
/// <remarks>
/// Not checked here: cachestat(2)'s number (451 in every table since Linux 6.5; the headers of
/// Debian 12 are 6.1's, which lack it), and macOS's values, which no probe of Linux's headers
/// can tell.
/// </remarks>
public sealed partial class LibcAbiTests
{
    public static TheoryData<string, Cpu> Targets => new()
    {
        { "x86_64-linux-gnu", Cpu.X64 },
        { "aarch64-linux-gnu", Cpu.Arm64 },
    };

    // The C expression each value is read from, and the value the code uses on that architecture.
    private static readonly (string Name, string C, Func<Cpu, long> Ours)[] s_values =
    [
        ("EAGAIN", "EAGAIN", _ => Libc.TryAgain),
        ("EWOULDBLOCK", "EWOULDBLOCK", _ => Libc.WouldBlock),
        ("EINTR", "EINTR", _ => Libc.Interrupted),
        ("ECONNABORTED", "ECONNABORTED", _ => Libc.ConnectionAborted),
        ("EPROTO", "EPROTO", _ => Libc.ProtocolError),
        ("EMFILE", "EMFILE", _ => Libc.TooManyFiles),
        ("ENFILE", "ENFILE", _ => Libc.TooManyFilesInSystem),
        ("ENOBUFS", "ENOBUFS", _ => Libc.NoBuffers),
        ("ENOMEM", "ENOMEM", _ => Libc.NoMemory),
        ("POLLIN", "POLLIN", _ => Libc.PollIn),
        ("EFD_NONBLOCK_CLOEXEC", "EFD_NONBLOCK | EFD_CLOEXEC", _ => Libc.EventNonBlockCloseOnExec),
        ("F_SETLEASE", "F_SETLEASE", _ => Libc.SetLease),
        ("F_SETSIG", "F_SETSIG", _ => Libc.SetSignal),
        ("SIGURG", "SIGURG", _ => Libc.UrgentSignal),
        ("F_RDLCK", "F_RDLCK", _ => Libc.ReadLock),
        ("F_UNLCK", "F_UNLCK", _ => Libc.Unlock),
        ("LOCK_EX", "LOCK_EX", _ => Libc.LockExclusive),
        ("LOCK_NB", "LOCK_NB", _ => Libc.LockNonBlocking),
        ("O_RDONLY", "O_RDONLY", _ => Libc.OpenReadOnly),
        ("O_WRONLY", "O_WRONLY", _ => Libc.OpenWriteOnly),
        ("O_RDWR", "O_RDWR", _ => Libc.OpenReadWrite),
        ("O_DIRECTORY", "O_DIRECTORY", a => Libc.OpenDirectoryOn(a)),
        ("O_TMPFILE", "O_TMPFILE", a => Libc.OpenUnnamedOn(a)),
        ("O_CLOEXEC", "O_CLOEXEC", _ => Libc.OpenCloseOnExec),
        ("O_NONBLOCK", "O_NONBLOCK", _ => Libc.NonBlocking),
        ("F_GETFL", "F_GETFL", _ => Libc.GetStatusFlags),
        ("F_SETFL", "F_SETFL", _ => Libc.SetStatusFlags),
        ("POSIX_FADV_DONTNEED", "POSIX_FADV_DONTNEED", _ => Libc.AdviseDontNeed),
        ("TMPFS_MAGIC", "TMPFS_MAGIC", _ => Libc.TmpfsMagic),
        ("FICLONE", "FICLONE", _ => (long)Libc.Ficlone),
        ("SCHED_IDLE", "SCHED_IDLE", _ => Libc.SchedIdle),
        ("PRIO_PROCESS", "PRIO_PROCESS", _ => Libc.PrioProcess),
        ("MFD_CLOEXEC", "MFD_CLOEXEC", _ => Libc.MemfdCloseOnExec),
        ("MFD_ALLOW_SEALING", "MFD_ALLOW_SEALING", _ => Libc.MemfdAllowSealing),
        ("F_ADD_SEALS", "F_ADD_SEALS", _ => Libc.AddSeals),
        ("F_SEAL_ALL", "F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE", _ => Libc.SealAll),
        ("MSG_DONTWAIT", "MSG_DONTWAIT", _ => Libc.MessageDontWait),
        ("MSG_NOSIGNAL", "MSG_NOSIGNAL", _ => Libc.MessageNoSignal),
        ("MSG_MORE", "MSG_MORE", _ => Libc.MessageMore),
        ("EPOLL_CLOEXEC", "EPOLL_CLOEXEC", _ => Libc.EpollCloseOnExec),
        ("EPOLL_CTL_ADD", "EPOLL_CTL_ADD", _ => Libc.EpollAdd),
        ("EPOLL_CTL_DEL", "EPOLL_CTL_DEL", _ => Libc.EpollDelete),
        ("EPOLL_CTL_MOD", "EPOLL_CTL_MOD", _ => Libc.EpollModify),
        ("EPOLLIN", "EPOLLIN", _ => Libc.EpollIn),
        ("EPOLLOUT", "EPOLLOUT", _ => Libc.EpollOut),
        ("EPOLLEXCLUSIVE", "EPOLLEXCLUSIVE", _ => Libc.EpollExclusive),
        ("EPOLLET", "(unsigned)EPOLLET", _ => Libc.EpollEdgeTriggered),
        ("EPOLL_ENDED", "EPOLLERR | EPOLLHUP | EPOLLRDHUP", _ => Libc.EpollEnded),
        ("SOCK_NONBLOCK_CLOEXEC", "SOCK_NONBLOCK | SOCK_CLOEXEC", _ => Libc.SocketNonBlockCloseOnExec),
        ("IPPROTO_TCP", "IPPROTO_TCP", _ => Libc.ProtocolTcp),
        ("TCP_NODELAY", "TCP_NODELAY", _ => Libc.TcpNoDelay),
        ("TCP_DEFER_ACCEPT", "TCP_DEFER_ACCEPT", _ => Libc.TcpDeferAccept),
        ("SHUT_RDWR", "SHUT_RDWR", _ => Libc.ShutdownBoth),
        ("M_ARENA_MAX", "M_ARENA_MAX", _ => Libc.ArenaMax),
        ("RTLD_LAZY", "RTLD_LAZY", _ => Libc.LoadLazy),
        ("RTLD_NOLOAD", "RTLD_NOLOAD", _ => Libc.LoadNoLoad),
        ("MADV_DONTNEED", "MADV_DONTNEED", _ => Libc.DontNeed),
        ("AT_PHDR", "AT_PHDR", _ => (long)Libc.AuxProgramHeaders),
        ("S_IFMT", "S_IFMT", _ => FileSystemProbe.S_IFMT),
        ("S_IFREG", "S_IFREG", _ => FileSystemProbe.S_IFREG),
        ("S_IFDIR", "S_IFDIR", _ => FileSystemProbe.S_IFDIR),
        ("S_IFLNK", "S_IFLNK", _ => FileSystemProbe.S_IFLNK),
        ("MODE_0400", "S_IRUSR", _ => FileBody.OwnerReadOnly),
        ("MODE_0600", "S_IRUSR | S_IWUSR", _ => FileBody.OwnerReadWrite),
        ("IN_MODIFY", "IN_MODIFY", _ => InotifyWatcher.InModify),
        ("IN_ATTRIB", "IN_ATTRIB", _ => InotifyWatcher.InAttrib),
        ("IN_CLOSE_WRITE", "IN_CLOSE_WRITE", _ => InotifyWatcher.InCloseWrite),
        ("IN_CLOSE_NOWRITE", "IN_CLOSE_NOWRITE", _ => InotifyWatcher.InCloseNoWrite),
        ("IN_OPEN", "IN_OPEN", _ => InotifyWatcher.InOpen),
        ("IN_MOVED_FROM", "IN_MOVED_FROM", _ => InotifyWatcher.InMovedFrom),
        ("IN_MOVED_TO", "IN_MOVED_TO", _ => InotifyWatcher.InMovedTo),
        ("IN_CREATE", "IN_CREATE", _ => InotifyWatcher.InCreate),
        ("IN_DELETE", "IN_DELETE", _ => InotifyWatcher.InDelete),
        ("IN_DELETE_SELF", "IN_DELETE_SELF", _ => InotifyWatcher.InDeleteSelf),
        ("IN_MOVE_SELF", "IN_MOVE_SELF", _ => InotifyWatcher.InMoveSelf),
        ("IN_Q_OVERFLOW", "IN_Q_OVERFLOW", _ => InotifyWatcher.InQueueOverflow),
        ("IN_IGNORED", "IN_IGNORED", _ => InotifyWatcher.InIgnored),
        ("IN_ONLYDIR", "IN_ONLYDIR", _ => InotifyWatcher.InOnlyDir),
        ("IN_DONT_FOLLOW", "IN_DONT_FOLLOW", _ => InotifyWatcher.InDontFollow),
        ("IN_EXCL_UNLINK", "IN_EXCL_UNLINK", _ => InotifyWatcher.InExclUnlink),
        ("IN_ISDIR", "IN_ISDIR", _ => InotifyWatcher.InIsDir),
        ("IN_NONBLOCK", "IN_NONBLOCK", _ => InotifyWatcher.InNonBlock),
        ("IN_CLOEXEC", "IN_CLOEXEC", _ => InotifyWatcher.InCloseOnExec),

        // Layouts: where the code reads a field of a buffer the kernel fills.
        ("STAT_DEV", "offsetof(struct stat, st_dev)", a => Libc.StatLayout.On(a).Device),
        ("STAT_INO", "offsetof(struct stat, st_ino)", a => Libc.StatLayout.On(a).Inode),
        ("STAT_MODE", "offsetof(struct stat, st_mode)", a => Libc.StatLayout.On(a).Mode),
        ("STAT_SIZE", "offsetof(struct stat, st_size)", a => Libc.StatLayout.On(a).Size),
        ("STAT_MTIME", "offsetof(struct stat, st_mtim.tv_sec)", a => Libc.StatLayout.On(a).ModifiedSeconds),
        ("STAT_MTIME_NSEC", "offsetof(struct stat, st_mtim.tv_nsec)", a => Libc.StatLayout.On(a).ModifiedNanoseconds),
        ("STAT_FIELD_WIDTHS", "sizeof(((struct stat*)0)->st_dev) * 1000000 + sizeof(((struct stat*)0)->st_ino) * 10000 + sizeof(((struct stat*)0)->st_mode) * 100 + sizeof(((struct stat*)0)->st_size)", _ => 8_08_04_08),
        ("STATFS_TYPE", "offsetof(struct statfs, f_type) * 100 + sizeof(((struct statfs*)0)->f_type)", _ => 0_08),
        ("EPOLL_EVENT_SIZE", "sizeof(struct epoll_event)", a => Libc.EpollEventSizeOn(a)),
        ("EPOLL_EVENT_DATA", "offsetof(struct epoll_event, data) + sizeof(((struct epoll_event*)0)->data)", a => Libc.EpollEventSizeOn(a)),
        ("INOTIFY_EVENT", "sizeof(struct inotify_event) * 10000 + offsetof(struct inotify_event, mask) * 100 + offsetof(struct inotify_event, len)", _ => 16_04_12),

        // The C# structs are sequential with natural alignment: the same layout on every 64-bit
        // architecture, so the sizes measured here, on this machine, stand for arm64's too.
        ("POLLFD_SIZE", "sizeof(struct pollfd)", _ => Marshal.SizeOf<Libc.PollFd>()),
        ("IOVEC_SIZE", "sizeof(struct iovec)", _ => Marshal.SizeOf<Libc.IoVector>()),
        ("MSGHDR_SIZE", "sizeof(struct msghdr)", _ => Marshal.SizeOf<Libc.MessageHeader>()),
        ("MSGHDR_IOV", "offsetof(struct msghdr, msg_iov)", _ => Marshal.OffsetOf<Libc.MessageHeader>(nameof(Libc.MessageHeader.Vectors))),
        ("MSGHDR_IOVLEN", "offsetof(struct msghdr, msg_iovlen)", _ => Marshal.OffsetOf<Libc.MessageHeader>(nameof(Libc.MessageHeader.VectorCount))),
        ("MSGHDR_CONTROL", "offsetof(struct msghdr, msg_control)", _ => Marshal.OffsetOf<Libc.MessageHeader>(nameof(Libc.MessageHeader.Control))),
        ("MSGHDR_FLAGS", "offsetof(struct msghdr, msg_flags)", _ => Marshal.OffsetOf<Libc.MessageHeader>(nameof(Libc.MessageHeader.Flags))),
    ];

    // Not compared with one value: the buffer the code gives stat(2) and fstatfs(2) must hold them.
    private static readonly (string Name, string C)[] s_sizes =
    [
        ("STAT_STRUCT", "sizeof(struct stat)"),
        ("STATFS_STRUCT", "sizeof(struct statfs)"),
    ];

    [CrossProbeTheory]
    [MemberData(nameof(Targets))]
    public async Task EveryValue_IsTheHeadersOne(string triple, Cpu architecture)
    {
        var probed = await ProbeAsync(triple);

        var wrong = new List<string>();
        foreach (var (name, c, ours) in s_values)
        {
            var expected = probed[name];
            var actual = ours(architecture);
            if (expected != actual)
            {
                wrong.Add($"{name} ({c}): the headers say 0x{expected:x} ({expected}), the code has 0x{actual:x} ({actual})");
            }
        }

        foreach (var (name, c) in s_sizes)
        {
            if (probed[name] > Libc.StatBufferSize)
            {
                wrong.Add($"{name} ({c}) is {probed[name]} bytes, more than Libc.StatBufferSize ({Libc.StatBufferSize})");
            }
        }

        Assert.True(wrong.Count == 0, $"For {triple}:\n" + string.Join("\n", wrong));
    }

    [CrossProbeFact]
    public async Task TheArchitectures_DifferWhereTheCodeChoosesByArchitecture()
    {
        // The probe itself can tell them apart: were both compiled alike, the test above could
        // not catch a value of the wrong architecture.
        var x64 = await ProbeAsync("x86_64-linux-gnu");
        var arm64 = await ProbeAsync("aarch64-linux-gnu");

        Assert.Equal(0x10000, x64["O_DIRECTORY"]);
        Assert.Equal(0x4000, arm64["O_DIRECTORY"]);
        Assert.NotEqual(x64["STAT_MODE"], arm64["STAT_MODE"]);
        Assert.NotEqual(x64["EPOLL_EVENT_SIZE"], arm64["EPOLL_EVENT_SIZE"]);
    }

    [LinuxFact]
    public void DirectoryFlag_OpensAFolder_AndRefusesAFile()
    {
        using var tree = new TempTree();
        var file = tree.Write("file.txt", "not a folder");

        var folder = Libc.open(tree.Root, Libc.OpenReadOnly | Libc.OpenDirectory | Libc.OpenCloseOnExec);
        Assert.True(folder >= 0, $"open(folder, O_DIRECTORY) failed with errno {Marshal.GetLastPInvokeError()}");
        Libc.close(folder);

        var refused = Libc.open(file, Libc.OpenReadOnly | Libc.OpenDirectory | Libc.OpenCloseOnExec);
        var errno = Marshal.GetLastPInvokeError();
        if (refused >= 0)
        {
            Libc.close(refused);
        }

        Assert.Equal(-1, refused);
        Assert.Equal(20, errno); // ENOTDIR
    }

    private static async Task<Dictionary<string, long>> ProbeAsync(string triple)
    {
        using var tree = new TempTree();
        var source = new StringBuilder("""
            #define _GNU_SOURCE
            #include <stddef.h>
            #include <errno.h>
            #include <fcntl.h>
            #include <poll.h>
            #include <dlfcn.h>
            #include <malloc.h>
            #include <sched.h>
            #include <signal.h>
            #include <elf.h>
            #include <sys/epoll.h>
            #include <sys/eventfd.h>
            #include <sys/file.h>
            #include <sys/inotify.h>
            #include <sys/mman.h>
            #include <sys/resource.h>
            #include <sys/socket.h>
            #include <sys/stat.h>
            #include <sys/statfs.h>
            #include <sys/uio.h>
            #include <netinet/in.h>
            #include <netinet/tcp.h>
            #include <linux/fs.h>
            #include <linux/magic.h>

            """);
        foreach (var (name, c, _) in s_values)
        {
            source.Append(CultureInfo.InvariantCulture, $"const long peregrine_{name} = (long)({c});\n");
        }

        foreach (var (name, c) in s_sizes)
        {
            source.Append(CultureInfo.InvariantCulture, $"const long peregrine_{name} = (long)({c});\n");
        }

        var path = tree.Write("probe.c", source.ToString());
        var start = new ProcessStartInfo("clang", ["--target=" + triple, "-S", "-O0", "-o", "-", path])
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        using var clang = Process.Start(start)!;
        var output = clang.StandardOutput.ReadToEndAsync();
        var errors = clang.StandardError.ReadToEndAsync();
        await HangGuard.WithinAsync(clang.WaitForExitAsync(), TimeSpan.FromSeconds(60));
        Assert.True(clang.ExitCode == 0, $"clang --target={triple} failed (for aarch64 the cross headers come from Debian's libc6-dev-arm64-cross):\n{await errors}");

        var values = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (Match match in ProbedValue().Matches(await output))
        {
            values[match.Groups["name"].Value] = match.Groups["zero"].Success ? 0 : long.Parse(match.Groups["value"].Value, CultureInfo.InvariantCulture);
        }

        Assert.Equal(s_values.Length + s_sizes.Length, values.Count);
        return values;
    }

    // A constant's data in clang's assembly: ".quad N" on x86-64, ".xword N" on aarch64, or
    // ".zero 8" for 0.
    [GeneratedRegex(@"^peregrine_(?<name>\w+):\s*\n\s*\.(?:(?:quad|xword)\s+(?<value>-?\d+)|(?<zero>zero)\s+8)", RegexOptions.Multiline)]
    private static partial Regex ProbedValue();
}

/// <summary>
/// A test that compiles <see cref="LibcAbiTests"/>' probe: skipped, saying why, without clang or
/// the aarch64 cross headers, except under CI=true, where .ci/run installs both and a missing
/// one fails the test instead.
/// </summary>
public sealed class CrossProbeFactAttribute : FactAttribute
{
    public CrossProbeFactAttribute() => Skip = CrossProbe.SkipReason();
}

/// <summary>The <see cref="TheoryAttribute"/> of <see cref="CrossProbeFactAttribute"/>.</summary>
public sealed class CrossProbeTheoryAttribute : TheoryAttribute
{
    public CrossProbeTheoryAttribute() => Skip = CrossProbe.SkipReason();
}

internal static class CrossProbe
{
    public static string? SkipReason()
    {
        if (string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }

        var clang = (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':').Any(folder => File.Exists(Path.Combine(folder, "clang")));
        if (!clang || !File.Exists("/usr/aarch64-linux-gnu/include/fcntl.h"))
        {
            return "Needs clang and the aarch64 cross headers (apt-get install clang libc6-dev-arm64-cross; .ci/run installs them under CI=true).";
        }

        return null;
    }
}
