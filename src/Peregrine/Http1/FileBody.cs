using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Peregrine.Interop;

namespace Peregrine.Http1;

/// <summary>
/// A representation's bytes in a file that <see cref="SocketOutput"/> sends with sendfile(2): the
/// kernel hands the file's pages to the socket, where a send from memory copies every byte into
/// the socket's buffers first (docs/performance.md, "Cleartext bodies by sendfile"). Either a
/// copy of bytes held in memory, in a memory file (memfd_create(2)) sealed against every write
/// and resize, or this process's private copy of a version streamed from disk
/// (<c>Sources/VersionCopies</c>), which no writer touches. Either way the bytes cannot change
/// under a response, and the descriptor is closed only when no send holds it (a SafeHandle).
/// </summary>
internal sealed partial class FileBody : SafeHandle
{
    // Every file holds a descriptor, and a memory file memory the GC does not see: at most this
    // many at once, and this many bytes in memory files, so that they can never take the
    // descriptors the listener needs or grow without bound. Beyond either, bodies are sent as
    // they were before: from memory, or by Kestrel from the disk.
    internal const int MaxCopies = 1024;
    internal const long MaxBytes = 256L * 1024 * 1024;

    /// <summary>
    /// Bodies this long or longer are copied into the page cache rather than a memory file
    /// (<see cref="TryCreateUnnamed"/>). Below it the residency check each send then needs cost
    /// more than the page cache saved: 2% of the CPU a request at 22 KB and 31 KB.
    /// </summary>
    internal const int PageCacheMinimum = 64 * 1024;

    /// <summary>
    /// How long a copy found resident is taken to stay so (<see cref="IsResident"/>). Asked on
    /// every send, cachestat(2) took 4% of the server's samples at 417 KB and 3% at 10 MB; pages
    /// evicted within this time are read back by the one sendfile that meets them, on the
    /// connection's thread, as nginx's sendfile reads any page it does not find
    /// (docs/performance.md, "Large bodies from the page cache").
    /// </summary>
    internal const int ResidencyTrustMilliseconds = 100;

    // Bytes read at a time to bring a copy's pages back into the page cache (WarmAsync).
    private const int WarmChunk = 256 * 1024;

    // Mode 0400 for an unnamed copy (TryCreateUnnamed); 0600 for the moment Refill opens it to write.
    internal const uint OwnerReadOnly = 0x100;
    internal const uint OwnerReadWrite = 0x180;

    private static int s_copies;
    private static long s_bytes;
    // UnnamedFilesUsable's answer: 0 not asked yet, 1 yes, 2 no.
    private static int s_unnamedUsable;

    // Bytes this copy counts against MaxBytes: its length if made from memory, none if adopted.
    private long _reserved;

    // Environment.TickCount64 until which IsResident answers yes without asking the kernel.
    private long _residentUntil;

    private readonly Lock _warmLock = new();
    private Task? _warming;

    private FileBody()
        : base(invalidHandleValue: -1, ownsHandle: true)
    {
    }

    public override bool IsInvalid => handle == -1;

    /// <summary>The byte count, the representation's length.</summary>
    public long Length { get; private set; }

    /// <summary>True for a sealed memory file, whose pages are always in memory; false for a copy in a disk's page cache.</summary>
    public bool InMemory { get; private set; }

    /// <summary>
    /// Takes <paramref name="file"/>, an open private copy already checked to hold the version
    /// (its length and time), for the representation's life; null when the copies in being leave
    /// no room, and the file is then closed.
    /// </summary>
    public static FileBody? TryAdopt(SafeFileHandle file, long length)
    {
        if (!PlatformParts.IsNative || !TryReserve(0))
        {
            file.Dispose();
            return null;
        }

        var body = new FileBody { Length = length };
        var added = false;
        file.DangerousAddRef(ref added);
        try
        {
            // The descriptor changes owner: a duplicate for this handle, the original closed
            // with the SafeFileHandle.
            var fd = Libc.dup((int)file.DangerousGetHandle());
            if (fd < 0)
            {
                Unreserve(0);
                return null;
            }

            body.SetHandle(fd);
            return body;
        }
        finally
        {
            if (added)
            {
                file.DangerousRelease();
            }

            file.Dispose();
        }
    }

    /// <summary>
    /// True when every page of the file is in the page cache (cachestat(2)), so that sendfile
    /// will not wait on the disk with the connection's thread: a copy on disk is sent only then,
    /// and otherwise its response is Kestrel's, which reads off that thread. A kernel without
    /// cachestat (before 6.5) answers false. A yes holds for <see cref="ResidencyTrustMilliseconds"/>
    /// without asking again.
    /// </summary>
    public unsafe bool IsResident()
    {
        if (InMemory)
        {
            return true;
        }

        var now = Environment.TickCount64;
        if (now < Volatile.Read(ref _residentUntil))
        {
            return true;
        }

        var added = false;
        try
        {
            DangerousAddRef(ref added);
            var range = new Libc.CachestatRange { Offset = 0, Length = (ulong)Length };
            Libc.Cachestat stat;
            var resident = Libc.cachestat((int)handle, &range, &stat, 0) == 0 && stat.Cached * (ulong)Environment.SystemPageSize >= (ulong)Length;
            if (resident)
            {
                Volatile.Write(ref _residentUntil, now + ResidencyTrustMilliseconds);
            }

            return resident;
        }
        finally
        {
            if (added)
            {
                DangerousRelease();
            }
        }
    }

    /// <summary>
    /// A copy of <paramref name="bytes"/> that cannot change, or null where neither kind is to be
    /// had (not Linux, the portable parts forced, or every call refused, for example out of
    /// descriptors): the caller then sends from memory. A body of <see cref="PageCacheMinimum"/>
    /// bytes or more goes into an unnamed file of the temporary folder where that folder is on a
    /// disk's file system (<see cref="TryCreateUnnamed"/>); any other, or where that is refused, into
    /// a sealed memory file.
    /// </summary>
    public static FileBody? TryCreate(ReadOnlySpan<byte> bytes)
    {
        if (!PlatformParts.IsNative || !TryReserve(bytes.Length))
        {
            return null;
        }

        var made = bytes.Length >= PageCacheMinimum && UnnamedFilesUsable() ? TryCreateUnnamed(bytes) : null;
        made ??= TryCreateSealed(bytes);
        if (made is null)
        {
            Unreserve(bytes.Length);
            return null;
        }

        // From here the handle gives the reservation back when it closes.
        made._reserved = bytes.Length;
        return made;
    }

    // A sealed memory file: memfd_create(2), written, then sealed against every write and resize.
    private static unsafe FileBody? TryCreateSealed(ReadOnlySpan<byte> bytes)
    {
        var fd = Libc.memfd_create("peregrine-content", Libc.MemfdCloseOnExec | Libc.MemfdAllowSealing);
        if (fd < 0)
        {
            return null;
        }

        if (!WriteAll(fd, bytes) || Libc.fcntl(fd, Libc.AddSeals, Libc.SealAll) != 0)
        {
            Libc.close(fd);
            return null;
        }

        var sealedContent = new FileBody { Length = bytes.Length, InMemory = true };
        sealedContent.SetHandle(fd);
        return sealedContent;
    }

    /// <summary>
    /// An unnamed file (O_TMPFILE) in the temporary folder, readable by its owner only, written
    /// and then held through a read-only descriptor alone. sendfile(2) from a memory file (tmpfs)
    /// looks up each 4 KiB page on its own, where the page cache of a disk's file system hands out
    /// pages in batches and large folios: at 130 KB and 417 KB that took 6-12% off the server's
    /// CPU a request (docs/performance.md, "Large bodies from the page cache"). Its pages can be
    /// evicted, so it is sent only while resident (<see cref="IsResident"/>). No other process can
    /// open it by a name, and its space goes back to the file system when it closes, or when the
    /// process ends however it ends. Where the folder is tmpfs this would be a memory file without
    /// the seals, so a sealed one is made instead.
    /// </summary>
    private static unsafe FileBody? TryCreateUnnamed(ReadOnlySpan<byte> bytes)
    {
        var writable = OpenUnnamed();
        if (writable < 0)
        {
            return null;
        }

        try
        {
            if (!WriteAll(writable, bytes))
            {
                return null;
            }

            // The descriptor kept cannot write: opened again, read-only, through /proc, and the
            // writable one closed.
            var fd = Libc.open($"/proc/self/fd/{writable}", Libc.OpenReadOnly | Libc.OpenCloseOnExec);
            if (fd < 0)
            {
                return null;
            }

            var copy = new FileBody { Length = bytes.Length, InMemory = false };
            copy.SetHandle(fd);
            return copy;
        }
        finally
        {
            Libc.close(writable);
        }
    }

    // Whether unnamed files of the temporary folder are on a disk's file system, and cachestat(2)
    // answers for them (without it, IsResident is always false and such a copy would never be
    // sent): asked once, with a file of one byte.
    private static unsafe bool UnnamedFilesUsable()
    {
        if (Volatile.Read(ref s_unnamedUsable) is var known and not 0)
        {
            return known == 1;
        }

        var usable = false;
        var fd = OpenUnnamed();
        if (fd >= 0)
        {
            var buffer = stackalloc byte[Libc.StatBufferSize];
            var range = new Libc.CachestatRange { Offset = 0, Length = 1 };
            Libc.Cachestat stat;
            usable = Libc.fstatfs(fd, buffer) == 0 && *(long*)buffer != Libc.TmpfsMagic
                && WriteAll(fd, [0]) && Libc.cachestat(fd, &range, &stat, 0) == 0;
            Libc.close(fd);
        }

        Volatile.Write(ref s_unnamedUsable, usable ? 1 : 2);
        return usable;
    }

    // A new unnamed file of the temporary folder, open for writing, mode 0400; -1 where refused.
    private static int OpenUnnamed() => Libc.open(Path.GetTempPath(), Libc.OpenUnnamed | Libc.OpenReadWrite | Libc.OpenCloseOnExec, OwnerReadOnly);

    private static unsafe bool WriteAll(int fd, ReadOnlySpan<byte> bytes)
    {
        fixed (byte* start = bytes)
        {
            var done = 0;
            while (done < bytes.Length)
            {
                var written = Libc.write(fd, start + done, (nuint)(bytes.Length - done));
                if (written < 0 && Marshal.GetLastPInvokeError() == Libc.Interrupted)
                {
                    continue;
                }

                if (written <= 0)
                {
                    return false;
                }

                done += (int)written;
            }
        }

        return true;
    }

    /// <summary>True while the copies in being leave no room for one more of <paramref name="length"/> bytes.</summary>
    public static bool AtCapacity(long length) => Volatile.Read(ref s_copies) >= MaxCopies || Interlocked.Read(ref s_bytes) + length > MaxBytes;

    private static bool TryReserve(long length)
    {
        if (Interlocked.Increment(ref s_copies) > MaxCopies)
        {
            Interlocked.Decrement(ref s_copies);
            return false;
        }

        if (Interlocked.Add(ref s_bytes, length) > MaxBytes)
        {
            Unreserve(length);
            return false;
        }

        return true;
    }

    private static void Unreserve(long length)
    {
        Interlocked.Decrement(ref s_copies);
        Interlocked.Add(ref s_bytes, -length);
    }

    protected override bool ReleaseHandle()
    {
        Unreserve(_reserved);
        return Libc.close((int)handle) == 0;
    }
}
