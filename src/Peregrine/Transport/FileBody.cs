using System.Runtime.InteropServices;
using Microsoft.Win32.SafeHandles;
using Peregrine.Interop;

namespace Peregrine.Transport;

/// <summary>
/// A representation's bytes in a file that <see cref="SocketOutput"/> sends with sendfile(2): the
/// kernel hands the file's pages to the socket, where a send from memory copies every byte into
/// the socket's buffers first (docs/performance.md, "Cleartext bodies by sendfile"). Either a
/// copy of bytes held in memory, in a memory file (memfd_create(2)) sealed against every write
/// and resize, or this process's private copy of a version streamed from disk
/// (<c>Sources/VersionCopies</c>), which no writer touches. Either way the bytes cannot change
/// under a response, and the descriptor is closed only when no send holds it (a SafeHandle).
/// </summary>
internal sealed class FileBody : SafeHandle
{
    // Every file holds a descriptor, and a memory file memory the GC does not see: at most this
    // many at once, and this many bytes in memory files, so that they can never take the
    // descriptors the listener needs or grow without bound. Beyond either, bodies are sent as
    // they were before: from memory, or by Kestrel from the disk.
    internal const int MaxCopies = 1024;
    internal const long MaxBytes = 256L * 1024 * 1024;

    // Bytes read at a time to bring a copy's pages back into the page cache (WarmAsync).
    private const int WarmChunk = 256 * 1024;

    private static int s_copies;
    private static long s_bytes;

    private readonly Lock _warmLock = new();
    private Task? _warming;

    private FileBody()
        : base(invalidHandleValue: -1, ownsHandle: true)
    {
    }

    public override bool IsInvalid => handle == -1;

    /// <summary>The byte count, the representation's length.</summary>
    public long Length { get; private set; }

    /// <summary>True for a sealed memory file, whose pages are always in memory; false for a copy on disk.</summary>
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
    /// cachestat (before 6.5) answers false.
    /// </summary>
    public unsafe bool IsResident()
    {
        if (InMemory)
        {
            return true;
        }

        var added = false;
        try
        {
            DangerousAddRef(ref added);
            var range = new Libc.CachestatRange { Offset = 0, Length = (ulong)Length };
            Libc.Cachestat stat;
            return Libc.cachestat((int)handle, &range, &stat, 0) == 0 && stat.Cached * (ulong)Environment.SystemPageSize >= (ulong)Length;
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
    /// Reads the file's pages into the page cache on a thread of the pool, which waits for the
    /// disk in the connection's stead: the connection that found the copy not resident
    /// (<see cref="IsResident"/>) waits for this, then sends it by sendfile as before, rather than
    /// having Kestrel copy the body through its pipe (docs/performance.md, "Cleartext bodies by
    /// sendfile"). Requests that find the copy cold meanwhile wait for the same read. Whether every
    /// page is in afterwards is for the caller to ask again: under memory pressure it may not be.
    /// </summary>
    public Task WarmAsync()
    {
        lock (_warmLock)
        {
            if (_warming is not { IsCompleted: false } warming)
            {
                warming = _warming = Task.Factory.StartNew(static state => ((FileBody)state!).Warm(), this, CancellationToken.None, TaskCreationOptions.DenyChildAttach, TaskScheduler.Default);
            }

            return warming;
        }
    }

    // The file read through, in chunks, into one scratch buffer, as the middleware's sender reads
    // a file: each page comes from the disk unless cached. A shared mapping populated at once
    // (MAP_POPULATE) reads the pages without a copy, but measured, the page cache dropped pages
    // brought in that way sooner than pages read through the file (bench/RESULTS.md, "Cold
    // private copies"). A failure leaves the pages as they were.
    private unsafe void Warm()
    {
        var added = false;
        var buffer = System.Buffers.ArrayPool<byte>.Shared.Rent(WarmChunk);
        try
        {
            DangerousAddRef(ref added);
            fixed (byte* start = buffer)
            {
                for (long offset = 0; offset < Length;)
                {
                    var read = Libc.pread((int)handle, start, (nuint)Math.Min(WarmChunk, Length - offset), offset);
                    if (read < 0 && Marshal.GetLastPInvokeError() == Libc.Interrupted)
                    {
                        continue;
                    }

                    if (read <= 0)
                    {
                        return;
                    }

                    offset += read;
                }
            }
        }
        catch (ObjectDisposedException)
        {
            // Closed with its representation meanwhile: nothing to warm.
        }
        finally
        {
            System.Buffers.ArrayPool<byte>.Shared.Return(buffer);
            if (added)
            {
                DangerousRelease();
            }
        }
    }

    /// <summary>
    /// A sealed copy of <paramref name="bytes"/>, or null where memory files are not to be had
    /// (not Linux, the portable parts forced, or any call refused, for example out of descriptors):
    /// the caller then sends from memory.
    /// </summary>
    public static unsafe FileBody? TryCreate(ReadOnlySpan<byte> bytes)
    {
        if (!PlatformParts.IsNative || !TryReserve(bytes.Length))
        {
            return null;
        }

        var fd = Libc.memfd_create("peregrine-content", Libc.MemfdCloseOnExec | Libc.MemfdAllowSealing);
        if (fd < 0)
        {
            Unreserve(bytes.Length);
            return null;
        }

        // From here the handle gives the reservation back when it closes.
        var sealedContent = new FileBody { Length = bytes.Length, InMemory = true };
        sealedContent.SetHandle(fd);
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
                    sealedContent.Dispose();
                    return null;
                }

                done += (int)written;
            }
        }

        if (Libc.fcntl(fd, Libc.AddSeals, Libc.SealAll) != 0)
        {
            sealedContent.Dispose();
            return null;
        }

        return sealedContent;
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
        Unreserve(InMemory ? Length : 0);
        return Libc.close((int)handle) == 0;
    }
}
