using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;

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
internal sealed partial class SocketOutput : GatheringWriter
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

    // Progress of the flush under way: the piece being sent and how much of it has gone.
    private int _index;
    private long _offset;

    // -1 until the first sendfile; then 1 when the socket is non-blocking (sendfile takes no
    // MSG_DONTWAIT), 0 when it is not and bodies go from memory.
    private int _nonBlocking = -1;

    public SocketOutput(Socket socket)
        : base(BufferSize) => _socket = socket;

    /// <summary>
    /// An output on a connected, non-blocking descriptor that has no <see cref="Socket"/>: for a
    /// caller that owns the descriptor, sends only by <see cref="SendWithoutWaiting"/> and
    /// closes it only after <see cref="GatheringWriter.Complete"/> (the reactor). Making a <see cref="Socket"/>
    /// for a descriptor costs ten system calls, and most connections never need one.
    /// </summary>
    internal SocketOutput(int descriptor)
        : base(BufferSize)
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
        AppendBody(new Piece(body, start, length, rented: false, file));
    }

    /// <summary>Appends the whole of <paramref name="file"/>, a body held on disk only, to be sent by sendfile(2).</summary>
    public void WriteBody(FileBody file) => WriteBody(file, 0, file.Length);

    /// <summary>Appends <paramref name="length"/> bytes of <paramref name="file"/> from <paramref name="start"/> (a byte range), as <see cref="WriteBody(FileBody)"/>.</summary>
    public void WriteBody(FileBody file, long start, long length)
    {
        AppendBody(new Piece(null, start, length, rented: false, file));
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
        if (Broken)
        {
            return Progress.Failed;
        }

        if (Unflushed == 0)
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
            Broken = true;
        }

        return progress;
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        if (Broken)
        {
            return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true));
        }

        if (Unflushed == 0)
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
                return SendRestAsync(Cancellation.Token(cancellationToken));
        }
    }

    private async ValueTask<FlushResult> SendRestAsync(CancellationToken token)
    {
        Cancellation.Waiting = true;
        try
        {
            while (true)
            {
                // The socket is full: wait until it takes more, sending the next bytes from memory
                // (read from the file for a body held on disk only).
                var piece = Pieces[_index];
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
            Broken = true;
            return new FlushResult(isCanceled: true, isCompleted: false);
        }
        catch (Exception e) when (e is SocketException or ObjectDisposedException)
        {
            // The client is gone, or Kestrel closed the socket.
            return Failed();
        }
        finally
        {
            Cancellation.Waiting = false;
        }
    }

    /// <summary>Moves past <paramref name="sent"/> bytes, which may end any number of pieces.</summary>
    private void Sent(long sent)
    {
        while (sent > 0)
        {
            var rest = Pieces[_index].Length - _offset;
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
        Broken = true;
        return new FlushResult(isCanceled: false, isCompleted: true);
    }

    private void Reset()
    {
        Clear();
        _index = 0;
        _offset = 0;
    }
}
