using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Transport;

/// <summary>
/// A copy of a representation's bytes in a sealed memory file (memfd_create(2) with every seal
/// set), which <see cref="SocketOutput"/> sends with sendfile(2): the kernel hands the file's
/// pages to the socket, where a send from memory copies every byte into the socket's buffers
/// first (docs/performance.md, "Cleartext bodies by sendfile"). The seals make the bytes
/// immutable for the file's life, so a page the socket still holds can never change under a
/// response, and the descriptor is closed only when no send holds it (a SafeHandle).
/// </summary>
internal sealed class SealedContent : SafeHandle
{
    // Every copy holds a descriptor and memory the GC does not see: at most this many at once,
    // and this many bytes, so that copies can never take the descriptors the listener needs or
    // grow without bound. Beyond either, bodies are sent from memory, as before there were copies.
    internal const int MaxCopies = 1024;
    internal const long MaxBytes = 256L * 1024 * 1024;

    private static int s_copies;
    private static long s_bytes;

    private SealedContent()
        : base(invalidHandleValue: -1, ownsHandle: true)
    {
    }

    public override bool IsInvalid => handle == -1;

    /// <summary>The byte count, the representation's length.</summary>
    public long Length { get; private set; }

    /// <summary>
    /// A sealed copy of <paramref name="bytes"/>, or null where memory files are not to be had
    /// (not Linux, the portable parts forced, or any call refused, for example out of descriptors):
    /// the caller then sends from memory.
    /// </summary>
    public static unsafe SealedContent? TryCreate(ReadOnlySpan<byte> bytes)
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
        var sealedContent = new SealedContent { Length = bytes.Length };
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
        Unreserve(Length);
        return Libc.close((int)handle) == 0;
    }
}
