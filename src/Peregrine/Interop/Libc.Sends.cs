using System.Runtime.InteropServices;

namespace Peregrine.Interop;

// The calls that send a response without a copy in user space, and the cleartext reactor's:
// sealed memory files, sendfile(2), sendmsg(2), epoll(7), accept4(2) and recv(2).
internal static partial class Libc
{
    // :: sealed memory files, memfd_create(2) with F_ADD_SEALS, and sends that copy nothing in
    // user space: sendfile(2) from such a file, send(2) with MSG_MORE for the head before it,
    // and sendmsg(2), which gathers a head and the bodies sent from memory after it into one call.

    public const uint MemfdCloseOnExec = 1;
    public const uint MemfdAllowSealing = 2;
    public const int AddSeals = 1033;

    /// <summary>F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE: the bytes can never change again.</summary>
    public const int SealAll = 1 | 2 | 4 | 8;

    public const int GetStatusFlags = 3;
    public const int SetStatusFlags = 4;

    /// <summary>O_NONBLOCK on Linux.</summary>
    public const int NonBlocking = 0x800;

    /// <summary>EINTR.</summary>
    public const int Interrupted = 4;

    public const int MessageDontWait = 0x40;
    public const int MessageNoSignal = 0x4000;
    public const int MessageMore = 0x8000;

    [LibraryImport("libc", SetLastError = true, StringMarshalling = StringMarshalling.Utf8)]
    public static partial int memfd_create(string name, uint flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint write(int fd, byte* buffer, nuint count);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint send(int fd, byte* buffer, nuint count, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint sendfile(int outFd, int inFd, long* offset, nuint count);

    /// <summary>struct iovec.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public unsafe struct IoVector
    {
        public byte* Base;
        public nuint Length;
    }

    /// <summary>struct msghdr (Linux), for a send that gathers several buffers: no address, no control data.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public unsafe struct MessageHeader
    {
        public void* Name;
        public uint NameLength;
        public IoVector* Vectors;
        public nuint VectorCount;
        public void* Control;
        public nuint ControlLength;
        public int Flags;
    }

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint sendmsg(int fd, MessageHeader* message, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint pread(int fd, byte* buffer, nuint count, long offset);

    [LibraryImport("libc", SetLastError = true)]
    public static partial int dup(int fd);

    // :: epoll(7), accept4(2) and recv(2), for the cleartext reactor of the standalone server.

    /// <summary>EPOLL_CLOEXEC.</summary>
    public const int EpollCloseOnExec = 0x80000;

    public const int EpollAdd = 1;
    public const int EpollDelete = 2;
    public const int EpollModify = 3;

    /// <summary>EPOLLIN, EPOLLOUT, EPOLLEXCLUSIVE and EPOLLET, from sys/epoll.h.</summary>
    public const uint EpollIn = 0x001;
    public const uint EpollOut = 0x004;
    public const uint EpollExclusive = 1u << 28;
    public const uint EpollEdgeTriggered = 1u << 31;

    /// <summary>EPOLLERR, EPOLLHUP and EPOLLRDHUP: the connection failed, or the peer closed (its sending side).</summary>
    public const uint EpollEnded = 0x008 | 0x010 | 0x2000;

    /// <summary>
    /// The size of struct epoll_event: 12 bytes on x86-64 (packed, as the kernel's header declares
    /// it there) and on 32-bit x86 (where a 64-bit field aligns to 4); 16 elsewhere. Its 64-bit
    /// data follows the 32-bit events at offset 4 or 8.
    /// </summary>
    public static readonly int EpollEventSize = EpollEventSizeOn(RuntimeInformation.ProcessArchitecture);

    public static int EpollEventSizeOn(Architecture architecture) => architecture is Architecture.X64 or Architecture.X86 ? 12 : 16;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int epoll_create1(int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int epoll_ctl(int epoll, int operation, int fd, byte* eventData);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int epoll_wait(int epoll, byte* events, int maxEvents, int timeout);

    /// <summary>SOCK_NONBLOCK | SOCK_CLOEXEC.</summary>
    public const int SocketNonBlockCloseOnExec = 0x800 | 0x80000;

    /// <summary>ECONNABORTED, EPROTO, EMFILE, ENFILE, ENOBUFS and ENOMEM.</summary>
    public const int ConnectionAborted = 103;
    public const int ProtocolError = 71;
    public const int TooManyFiles = 24;
    public const int TooManyFilesInSystem = 23;
    public const int NoBuffers = 105;
    public const int NoMemory = 12;

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int accept4(int fd, void* address, void* addressLength, int flags);

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial nint recv(int fd, byte* buffer, nuint count, int flags);

    /// <summary>IPPROTO_TCP and TCP_NODELAY.</summary>
    public const int ProtocolTcp = 6;
    public const int TcpNoDelay = 1;

    /// <summary>TCP_DEFER_ACCEPT: a listening socket's connections are accepted once their first bytes have come.</summary>
    public const int TcpDeferAccept = 9;

    [LibraryImport("libc", SetLastError = true)]
    public static unsafe partial int setsockopt(int fd, int level, int name, void* value, uint length);

    /// <summary>SHUT_RDWR.</summary>
    public const int ShutdownBoth = 2;

    [LibraryImport("libc", SetLastError = true)]
    public static partial int shutdown(int fd, int how);
}
