using System.Buffers;
using System.IO.Pipelines;

namespace Peregrine.Http1;

/// <summary>
/// What the fast path's own outputs (<see cref="SocketOutput"/> on a cleartext socket,
/// <see cref="TlsRecordWriter"/> on a TLS stream) share: responses gathered, until a flush, as a
/// list of pieces, heads and small bodies copied into buffers rented from the shared pool, and
/// larger bodies kept as their own arrays or files; the count of bytes not yet flushed; and one
/// cancellation for a flush that waits on the client. How the pieces are sent is each writer's.
/// </summary>
/// <remarks>
/// Nothing here is virtual beyond <see cref="PipeWriter"/>'s own members, and both writers are
/// sealed: a call through either is direct.
/// </remarks>
internal abstract class GatheringWriter : PipeWriter
{
    private readonly int _bufferSize;
    private byte[]? _current;
    private int _written;

    /// <param name="bufferSize">The size of each buffer rented for heads and small bodies.</param>
    private protected GatheringWriter(int bufferSize) => _bufferSize = bufferSize;

    /// <summary>What a flush is to send, in order: buffers filled, and bodies appended whole.</summary>
    private protected List<Piece> Pieces { get; } = [];

    private protected FlushCancellation Cancellation { get; } = new();

    /// <summary>Bytes appended and not yet sent.</summary>
    private protected long Unflushed;

    /// <summary>A send was cancelled or failed, and the response cut short: every later flush reports the connection completed.</summary>
    private protected bool Broken;

    /// <summary>Room left in the buffer being written into; empty when none is open.</summary>
    private protected Span<byte> Space => _current is null ? default : _current.AsSpan(_written);

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => Unflushed;

    public override void Advance(int bytes)
    {
        _written += bytes;
        Unflushed += bytes;
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
            Unflushed += count;
            bytes = bytes[count..];
        }
    }

    private byte[] Reserve(int sizeHint)
    {
        if (_current is { } current && current.Length - _written >= Math.Max(sizeHint, 1))
        {
            return current;
        }

        EndBuffer();
        return _current = ArrayPool<byte>.Shared.Rent(Math.Max(sizeHint, _bufferSize));
    }

    /// <summary>Closes the buffer being written into: it joins the pieces to send, or goes back to the pool empty.</summary>
    private protected void EndBuffer()
    {
        var filled = _current;
        var length = _written;
        _current = null;
        _written = 0;
        if (filled is null)
        {
            return;
        }

        if (length == 0)
        {
            ArrayPool<byte>.Shared.Return(filled);
            return;
        }

        Pieces.Add(new Piece(filled, 0, length, rented: true, file: null));
    }

    /// <summary>Appends a piece that is not this writer's to return: a body's own array or file, which must not change until the next flush returns.</summary>
    private protected void AppendBody(Piece body)
    {
        EndBuffer();
        Pieces.Add(body);
        Unflushed += body.Length;
    }

    /// <summary>Everything was sent (or is dropped): the buffers go back to the pool, the last one too, so that an idle keep-alive connection holds none.</summary>
    private protected void Clear()
    {
        foreach (var piece in Pieces)
        {
            if (piece.Rented)
            {
                ArrayPool<byte>.Shared.Return(piece.Array!);
            }
        }

        Pieces.Clear();
        Unflushed = 0;
        if (_current is not null)
        {
            ArrayPool<byte>.Shared.Return(_current);
            _current = null;
        }

        _written = 0;
    }

    /// <summary>Cancels a flush waiting on the client (it stopped reading); with none waiting there is nothing to cancel.</summary>
    public override void CancelPendingFlush() => Cancellation.Cancel();

    /// <summary>Returns the buffers; the connection stays open for Kestrel.</summary>
    public override void Complete(Exception? exception = null)
    {
        Clear();
        Cancellation.Dispose();
    }

    /// <summary>
    /// Bytes to send: a buffer, a body's array, or a body's file (with its array when it is held
    /// in memory too); <see cref="Length"/> bytes from <see cref="Start"/> in the array or file.
    /// </summary>
    private protected readonly struct Piece(byte[]? array, long start, long length, bool rented, FileBody? file)
    {
        public byte[]? Array { get; } = array;

        public long Start { get; } = start;

        public long Length { get; } = length;

        /// <summary>A buffer of this writer's, to go back to the pool once sent.</summary>
        public bool Rented { get; } = rented;

        public FileBody? File { get; } = file;
    }
}
