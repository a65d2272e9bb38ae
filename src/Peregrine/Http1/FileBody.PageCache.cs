using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Http1;

// A copy's pages brought back into the page cache off the connection's thread: read through
// (WarmAsync), or an unnamed copy written again from its bytes (RefillAsync).
internal sealed partial class FileBody
{
    /// <summary>
    /// Reads the file's pages into the page cache on a thread of the pool, which waits for the
    /// disk in the connection's stead: the connection that found the copy not resident
    /// (<see cref="IsResident"/>) waits for this, then sends it by sendfile as before, rather than
    /// having Kestrel copy the body through its pipe (docs/performance.md, "Cleartext bodies by
    /// sendfile"). Requests that find the copy cold meanwhile wait for the same read. Whether every
    /// page is in afterwards is for the caller to ask again: under memory pressure it may not be.
    /// </summary>
    public Task WarmAsync() => Warming(static state => ((FileBody)state!).Warm(), this);

    /// <summary>
    /// As <see cref="WarmAsync"/>, for an unnamed copy of <paramref name="content"/>, the bytes it
    /// was made from: they are written into it again from memory rather than read back from the
    /// disk. The page cache takes a whole body's write in large folios; read back, the file comes
    /// in readahead's smaller ones, which sendfile then hands out one by one: at 130 KB the kernel's
    /// page cache functions took 6.0% of the server's samples after a read back against 2.2% on a
    /// copy as written (docs/performance.md, "Large bodies from the page cache"). Identical bytes, so a send that
    /// meets them mid-write sends the same body. Where that cannot be done, read back as by
    /// <see cref="WarmAsync"/>.
    /// </summary>
    public Task RefillAsync(byte[] content) => Warming(static state => Refill(((FileBody, byte[]))state!), (this, content));

    // The read or write under way, or else this one started on a thread of the pool: one at a
    // time for a copy, and requests that find it cold meanwhile wait for the same.
    private Task Warming(Action<object?> work, object state)
    {
        lock (_warmLock)
        {
            if (_warming is not { IsCompleted: false } warming)
            {
                warming = _warming = Task.Factory.StartNew(work, state, CancellationToken.None, TaskCreationOptions.DenyChildAttach, TaskScheduler.Default);
            }

            return warming;
        }
    }

    private static void Refill((FileBody Body, byte[] Content) state)
    {
        var (body, content) = state;
        var added = false;
        bool written;
        try
        {
            body.DangerousAddRef(ref added);
            written = !body.InMemory && content.Length == body.Length && WriteAgain((int)body.DangerousGetHandle(), content);
        }
        catch (ObjectDisposedException)
        {
            // Closed with its representation meanwhile: nothing to fill.
            return;
        }
        finally
        {
            if (added)
            {
                body.DangerousRelease();
            }
        }

        if (!written)
        {
            body.Warm();
        }
    }

    // The pages still cached, in whatever folios, dropped first, so that the write makes new ones;
    // then the file opened to write through /proc for the time of one open(2), its mode 0600 and
    // back to 0400 at once, and written whole. The descriptor kept stays read-only.
    private static bool WriteAgain(int fd, byte[] content)
    {
        _ = Libc.posix_fadvise(fd, 0, 0, Libc.AdviseDontNeed);
        if (Libc.fchmod(fd, OwnerReadWrite) != 0)
        {
            return false;
        }

        int writable;
        try
        {
            writable = Libc.open($"/proc/self/fd/{fd}", Libc.OpenWriteOnly | Libc.OpenCloseOnExec);
        }
        finally
        {
            _ = Libc.fchmod(fd, OwnerReadOnly);
        }

        if (writable < 0)
        {
            return false;
        }

        try
        {
            return WriteAll(writable, content);
        }
        finally
        {
            Libc.close(writable);
        }
    }

    // The file read through, in chunks, into one scratch buffer, as the middleware's sender reads
    // a file: each page comes from the disk unless cached. A shared mapping populated at once
    // (MAP_POPULATE) reads the pages without a copy, but measured, the page cache dropped pages
    // brought in that way sooner than pages read through the file (docs/performance.md,
    // "Cleartext bodies by sendfile"). A failure leaves the pages as they were.
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
}
