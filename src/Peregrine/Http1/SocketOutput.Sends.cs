using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Http1;

// The system calls that send: send(2) and sendmsg(2) from memory, sendfile(2) from a body's
// file, each without waiting (MSG_DONTWAIT, or the socket non-blocking), and pread(2) for the
// few KiB a wait on a full socket sends from memory.
internal sealed partial class SocketOutput
{
    /// <summary>Sends what the socket takes without waiting, from the current piece on; <paramref name="closing"/> as for <see cref="SendWithoutWaiting"/>.</summary>
    private Progress SendNow(bool closing = false)
    {
        if (_socket is null)
        {
            // The owner of the descriptor sends and closes it on one thread.
            return SendNow(_descriptor, closing);
        }

        var handle = _socket.SafeHandle;
        var added = false;
        try
        {
            handle.DangerousAddRef(ref added);
            return SendNow((int)handle.DangerousGetHandle(), closing);
        }
        catch (ObjectDisposedException)
        {
            // Kestrel closed the socket (the connection was aborted).
            return Progress.Failed;
        }
        finally
        {
            if (added)
            {
                handle.DangerousRelease();
            }
        }
    }

    private unsafe Progress SendNow(int fd, bool closing)
    {
        while (_index < Pieces.Count)
        {
            var piece = Pieces[_index];
            nint sent;
            if (piece.File is { } file && (CanSendFile(fd) || piece.Array is null))
            {
                // A socket that is not non-blocking would make sendfile wait with the thread:
                // bodies in memory then go by send(2); one on disk only still goes by
                // sendfile, as nothing else can send it here.
                sent = SendFile(fd, file, piece);
            }
            else
            {
                sent = SendGathered(fd, closing);
            }

            if (sent > 0)
            {
                Sent(sent);
                continue;
            }

            var error = sent < 0 ? Marshal.GetLastPInvokeError() : 0;
            if (error == Libc.Interrupted)
            {
                continue;
            }

            return error == Libc.TryAgain ? Progress.Full : Progress.Failed;
        }

        return Progress.Done;
    }

    /// <summary>
    /// Sends the current piece and the pieces after it that go from memory too, up to
    /// <see cref="MaxGathered"/>, in one sendmsg(2): a head and the body after it in one call,
    /// where two sends took two. MSG_MORE while more follows, so that a head and a body sent by
    /// sendfile after it leave together.
    /// </summary>
    private unsafe nint SendGathered(int fd, bool closing)
    {
        var count = 1;
        while (count < MaxGathered && _index + count < Pieces.Count && GoesFromMemory(Pieces[_index + count], fd))
        {
            count++;
        }

        var flags = Libc.MessageDontWait | Libc.MessageNoSignal | (_index + count < Pieces.Count || closing ? Libc.MessageMore : 0);
        var first = Pieces[_index];
        if (count == 1)
        {
            fixed (byte* start = first.Array!)
            {
                return Libc.send(fd, start + first.Start + _offset, (nuint)(first.Length - _offset), flags);
            }
        }

        var second = Pieces[_index + 1];
        var third = count > 2 ? Pieces[_index + 2] : default;
        var fourth = count > 3 ? Pieces[_index + 3] : default;

        // Every array stays pinned for the call: the runtime may move objects while a thread
        // is in native code.
        fixed (byte* a = first.Array!, b = second.Array!, c = third.Array, d = fourth.Array)
        {
            var vectors = stackalloc Libc.IoVector[MaxGathered];
            vectors[0] = new Libc.IoVector { Base = a + first.Start + _offset, Length = (nuint)(first.Length - _offset) };
            vectors[1] = new Libc.IoVector { Base = b + second.Start, Length = (nuint)second.Length };
            vectors[2] = new Libc.IoVector { Base = c + third.Start, Length = (nuint)third.Length };
            vectors[3] = new Libc.IoVector { Base = d + fourth.Start, Length = (nuint)fourth.Length };
            var message = new Libc.MessageHeader { Vectors = vectors, VectorCount = (nuint)count };
            return Libc.sendmsg(fd, &message, flags);
        }
    }

    /// <summary>Whether <paramref name="piece"/> goes by send(2) from its array rather than by sendfile(2).</summary>
    private bool GoesFromMemory(Piece piece, int fd) => piece.Array is not null && (piece.File is null || !CanSendFile(fd));

    private unsafe nint SendFile(int fd, FileBody file, Piece piece)
    {
        var added = false;
        try
        {
            file.DangerousAddRef(ref added);
            var offset = piece.Start + _offset;

            // At most 1 GiB a call: sendfile's own limit is just under 2 GiB.
            return Libc.sendfile(fd, (int)file.DangerousGetHandle(), &offset, (nuint)Math.Min(piece.Length - _offset, 1 << 30));
        }
        finally
        {
            if (added)
            {
                file.DangerousRelease();
            }
        }
    }

    /// <summary>Reads <paramref name="count"/> bytes of <paramref name="file"/> from <paramref name="offset"/>.</summary>
    private static unsafe bool ReadFully(FileBody file, byte[] buffer, int count, long offset)
    {
        var added = false;
        try
        {
            file.DangerousAddRef(ref added);
            var done = 0;
            fixed (byte* start = buffer)
            {
                while (done < count)
                {
                    var read = Libc.pread((int)file.DangerousGetHandle(), start + done, (nuint)(count - done), offset + done);
                    if (read < 0 && Marshal.GetLastPInvokeError() == Libc.Interrupted)
                    {
                        continue;
                    }

                    if (read <= 0)
                    {
                        return false;
                    }

                    done += (int)read;
                }
            }

            return true;
        }
        finally
        {
            if (added)
            {
                file.DangerousRelease();
            }
        }
    }

    private bool CanSendFile(int fd)
    {
        if (_nonBlocking < 0)
        {
            var flags = Libc.fcntl(fd, Libc.GetStatusFlags, 0);
            _nonBlocking = flags >= 0 && (flags & Libc.NonBlocking) != 0 ? 1 : 0;
        }

        return _nonBlocking == 1;
    }
}
