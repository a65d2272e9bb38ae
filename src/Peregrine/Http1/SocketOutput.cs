using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Http1;

/// <summary>
/// The fast path's output on a cleartext connection, written to the socket itself rather than
/// through Kestrel's output pipe. Heads and small bodies are gathered into a buffer, as in the
/// pipe; a body of <see cref="DirectBodyMinimum"/> bytes or more is not copied at all: it is sent
/// from its <see cref="FileBody"/> by sendfile(2), the head before it with MSG_MORE so both
/// leave in the same segments, or from the representation's own array where no sealed copy is to
/// be had. Through the pipe, every body was copied twice, into the pipe's 4 KiB blocks and by the
/// kernel into the socket's buffers, and the second copy was a third of the server's time at
/// 130 KB (docs/performance.md, "Cleartext bodies by sendfile").
/// </summary>
/// <remarks>
/// Used only while the fast path owns the connection, and never beside Kestrel's writes: it is
/// flushed before a hand-off, and Kestrel's pipe stays empty until then, so the two never
/// interleave. Sends are made without blocking (MSG_DONTWAIT; sendfile on the socket Kestrel's
/// transport made non-blocking); when the socket is full, the writer waits for it through
/// <see cref="Socket.SendAsync(ReadOnlyMemory{byte}, SocketFlags, CancellationToken)"/> with the
/// next few KiB of the body from memory, then goes on without copying. The socket's handle is
/// held for every call, so its descriptor cannot be closed and reused under one. A cancelled or
/// failed send leaves the response cut short: every later flush reports the connection
/// completed, and the fast path closes it.
/// The standalone server's reactor gives a bare descriptor instead, which it alone uses and
/// closes, and sends without waiting only; a connection it hands to Kestrel brings the
/// <see cref="Socket"/> made for it then (<see cref="Attach"/>).
/// </remarks>
internal sealed class SocketOutput : PipeWriter
{
    /// <summary>Bodies this long or longer are sent without a user-space copy.</summary>
    internal const int DirectBodyMinimum = 16 * 1024;

    // Heads and small bodies: the fast path flushes after 64 KiB of responses, so most batches
    // fit one buffer.
    private const int BufferSize = 32 * 1024;

    // Pieces one sendmsg(2) gathers: a batch of pipelined responses is a buffer and a body, and
    // another such pair.
    private const int MaxGathered = 4;

    // What is sent from memory to wait for a full socket: enough to be a useful segment.
    private const int WaitChunk = 16 * 1024;

    private Socket? _socket;

    // The descriptor of an output made without a socket (the reactor's); used until it has one.
    private readonly int _descriptor = -1;
    private readonly List<Piece> _pieces = [];
    private byte[]? _current;
    private int _written;
    private long _unflushed;

    // Progress of the flush under way: the piece being sent and how much of it has gone.
    private int _index;
    private long _offset;

    private readonly FlushCancellation _cancel = new();
    private bool _broken;

    // -1 until the first sendfile; then 1 when the socket is non-blocking (sendfile takes no
    // MSG_DONTWAIT), 0 when it is not and bodies go from memory.
    private int _nonBlocking = -1;

    public SocketOutput(Socket socket) => _socket = socket;

    /// <summary>
    /// An output on a connected, non-blocking descriptor that has no <see cref="Socket"/>: for a
    /// caller that owns the descriptor, sends only by <see cref="SendWithoutWaiting"/> and
    /// closes it only after <see cref="Complete"/> (the reactor). Making a <see cref="Socket"/>
    /// for a descriptor costs ten system calls, and most connections never need one.
    /// </summary>
    internal SocketOutput(int descriptor)
    {
        _descriptor = descriptor;
        _nonBlocking = 1;
    }

    /// <summary>Gives an output made on a bare descriptor the socket made for it since, for its sends to wait on once Kestrel has the connection.</summary>
    internal void Attach(Socket socket) => _socket = socket;

    /// <summary>How far a send without waiting got.</summary>
    internal enum Progress
    {
        /// <summary>Everything was sent.</summary>
        Done,

        /// <summary>The socket took what it could; the rest waits for the next <see cref="SendWithoutWaiting"/> or <see cref="FlushAsync"/>.</summary>
        Full,

        /// <summary>The connection failed: every later flush reports it completed.</summary>
        Failed,
    }

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _unflushed;

    public override void Advance(int bytes)
    {
        _written += bytes;
        _unflushed += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_written);

    public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_written);

    /// <summary>
    /// Copies <paramref name="bytes"/> in, as <see cref="BuffersExtensions.Write{T}(IBufferWriter{T}, ReadOnlySpan{T})"/>
    /// does, but by direct calls: through the extension, each write is two interface calls,
    /// which the JIT's profile-guided code avoids and Native AOT's cannot.
    /// </summary>
    public void Append(ReadOnlySpan<byte> bytes)
    {
        while (!bytes.IsEmpty)
        {
            var buffer = Reserve(1);
            var count = Math.Min(bytes.Length, buffer.Length - _written);
            bytes[..count].CopyTo(buffer.AsSpan(_written));
            _written += count;
            _unflushed += count;
            bytes = bytes[count..];
        }
    }

    /// <summary>
    /// Appends <paramref name="body"/> without copying it: from <paramref name="file"/> by
    /// sendfile(2) when there is one, else from the array. The array must not change until the
    /// next flush returns (a representation's content never does).
    /// </summary>
    public void WriteBody(byte[] body, FileBody? file) => WriteBody(body, file, 0, body.Length);

    /// <summary>
    /// Appends <paramref name="length"/> bytes of <paramref name="body"/> from
    /// <paramref name="start"/> (a byte range), as <see cref="WriteBody(byte[], FileBody?)"/>.
    /// </summary>
    public void WriteBody(byte[] body, FileBody? file, long start, long length)
    {
        EndBuffer();
        _pieces.Add(new Piece(body, start, length, rented: false, file));
        _unflushed += length;
    }

    /// <summary>Appends the whole of <paramref name="file"/>, a body held on disk only, to be sent by sendfile(2).</summary>
    public void WriteBody(FileBody file) => WriteBody(file, 0, file.Length);

    /// <summary>Appends <paramref name="length"/> bytes of <paramref name="file"/> from <paramref name="start"/> (a byte range), as <see cref="WriteBody(FileBody)"/>.</summary>
    public void WriteBody(FileBody file, long start, long length)
    {
        EndBuffer();
        _pieces.Add(new Piece(null, start, length, rented: false, file));
        _unflushed += length;
    }

    private byte[] Reserve(int sizeHint)
    {
        if (_current is { } current && current.Length - _written >= Math.Max(sizeHint, 1))
        {
            return current;
        }

        EndBuffer();
        return _current = ArrayPool<byte>.Shared.Rent(Math.Max(sizeHint, BufferSize));
    }

    /// <summary>Closes the buffer being written into: it joins the pieces to send, or goes back to the pool empty.</summary>
    private void EndBuffer()
    {
        if (FilledBuffer.Close(ref _current, ref _written, out var length) is { } filled)
        {
            _pieces.Add(new Piece(filled, 0, length, rented: true, file: null));
        }
    }

    /// <summary>
    /// Sends what the socket takes now, without waiting: for a caller that waits for the socket
    /// itself (the standalone server's reactor). What <see cref="Progress.Full"/> leaves is sent
    /// by the next call, once the socket has room, or by <see cref="FlushAsync"/> after a hand-off.
    /// </summary>
    /// <param name="closing">
    /// The caller shuts the connection down once this has gone: the last bytes are sent with
    /// MSG_MORE too, so that the kernel holds them for the shutdown, and they leave with the FIN
    /// in one segment, as nginx's corked responses do, rather than the FIN in one of its own.
    /// </param>
    internal Progress SendWithoutWaiting(bool closing = false)
    {
        if (_broken)
        {
            return Progress.Failed;
        }

        if (_unflushed == 0)
        {
            return Progress.Done;
        }

        EndBuffer();
        var progress = SendNow(closing);
        if (progress == Progress.Done)
        {
            Reset();
        }
        else if (progress == Progress.Failed)
        {
            _broken = true;
        }

        return progress;
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        if (_broken)
        {
            return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true));
        }

        if (_unflushed == 0)
        {
            return default;
        }

        EndBuffer();

        // The common case: the socket takes everything at once, with no async state machine.
        switch (SendNow())
        {
            case Progress.Done:
                Reset();
                return default;
            case Progress.Failed:
                return new ValueTask<FlushResult>(Failed());
            default:
                return SendRestAsync(_cancel.Token(cancellationToken));
        }
    }

    private async ValueTask<FlushResult> SendRestAsync(CancellationToken token)
    {
        _cancel.Waiting = true;
        try
        {
            while (true)
            {
                // The socket is full: wait until it takes more, sending the next bytes from memory
                // (read from the file for a body held on disk only).
                var piece = _pieces[_index];
                var chunk = (int)Math.Min(piece.Length - _offset, WaitChunk);
                var socket = _socket ?? throw new InvalidOperationException("An output on a bare descriptor cannot wait for the socket; it needs the socket made for it (Attach).");
                if (piece.Array is { } array)
                {
                    Sent(await socket.SendAsync(array.AsMemory((int)(piece.Start + _offset), chunk), SocketFlags.None, token));
                }
                else
                {
                    var read = ArrayPool<byte>.Shared.Rent(chunk);
                    try
                    {
                        if (!ReadFully(piece.File!, read, chunk, piece.Start + _offset))
                        {
                            return Failed();
                        }

                        Sent(await socket.SendAsync(read.AsMemory(0, chunk), SocketFlags.None, token));
                    }
                    finally
                    {
                        ArrayPool<byte>.Shared.Return(read);
                    }
                }

                switch (SendNow())
                {
                    case Progress.Done:
                        Reset();
                        return default;
                    case Progress.Failed:
                        return Failed();
                }
            }
        }
        catch (OperationCanceledException)
        {
            _broken = true;
            return new FlushResult(isCanceled: true, isCompleted: false);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // The client is gone, or Kestrel closed the socket.
            return Failed();
        }
        finally
        {
            _cancel.Waiting = false;
        }
    }

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
        while (_index < _pieces.Count)
        {
            var piece = _pieces[_index];
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
        while (count < MaxGathered && _index + count < _pieces.Count && GoesFromMemory(_pieces[_index + count], fd))
        {
            count++;
        }

        var flags = Libc.MessageDontWait | Libc.MessageNoSignal | (_index + count < _pieces.Count || closing ? Libc.MessageMore : 0);
        var first = _pieces[_index];
        if (count == 1)
        {
            fixed (byte* start = first.Array!)
            {
                return Libc.send(fd, start + first.Start + _offset, (nuint)(first.Length - _offset), flags);
            }
        }

        var second = _pieces[_index + 1];
        var third = count > 2 ? _pieces[_index + 2] : default;
        var fourth = count > 3 ? _pieces[_index + 3] : default;

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

    /// <summary>Moves past <paramref name="sent"/> bytes, which may end any number of pieces.</summary>
    private void Sent(long sent)
    {
        while (sent > 0)
        {
            var rest = _pieces[_index].Length - _offset;
            if (sent < rest)
            {
                _offset += sent;
                return;
            }

            sent -= rest;
            _index++;
            _offset = 0;
        }
    }

    private FlushResult Failed()
    {
        _broken = true;
        return new FlushResult(isCanceled: false, isCompleted: true);
    }

    /// <summary>Cancels a send waiting for the socket (the client stopped reading); with none waiting there is nothing to cancel.</summary>
    public override void CancelPendingFlush()
    {
        _cancel.Cancel();
    }

    /// <summary>Returns the buffers; the socket stays open for Kestrel.</summary>
    public override void Complete(Exception? exception = null)
    {
        Reset();
        _cancel.Dispose();
    }

    private void Reset()
    {
        foreach (var piece in _pieces)
        {
            if (piece.Rented)
            {
                ArrayPool<byte>.Shared.Return(piece.Array!);
            }
        }

        _pieces.Clear();
        _index = 0;
        _offset = 0;
        _unflushed = 0;

        // The last buffer goes back too: an idle keep-alive connection holds none.
        if (_current is not null)
        {
            ArrayPool<byte>.Shared.Return(_current);
            _current = null;
        }

        _written = 0;
    }

    /// <summary>
    /// Bytes to send: a buffer, a body's array, or a body's file (with its array when it is held
    /// in memory too); <see cref="Length"/> bytes from <see cref="Start"/> in the array or file.
    /// </summary>
    private readonly struct Piece(byte[]? array, long start, long length, bool rented, FileBody? file)
    {
        public byte[]? Array { get; } = array;

        public long Start { get; } = start;

        public long Length { get; } = length;

        public bool Rented { get; } = rented;

        public FileBody? File { get; } = file;
    }
}
