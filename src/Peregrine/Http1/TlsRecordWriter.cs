using System.IO.Pipelines;
using System.Net.Security;
using System.Runtime.CompilerServices;

namespace Peregrine.Http1;

/// <summary>
/// The fast path's output on a TLS connection: responses are gathered into buffers of
/// <see cref="BufferSize"/> bytes and each buffer is handed to the <see cref="SslStream"/> in one
/// write. Kestrel's own output over TLS is a pipe of 4 KiB blocks written one block per
/// <c>SslStream.WriteAsync</c>, so a response became one TLS record, one encryption and one write
/// to the socket's pipe per 4 KiB block; here it is one write, which OpenSSL cuts into 16 KiB
/// records (docs/performance.md, "TLS output in 32 KiB writes").
/// </summary>
/// <remarks>
/// Used only while the fast path owns the connection: it is flushed before a hand-off, after
/// which Kestrel writes through its own pipe over the same stream. A cancelled write leaves the
/// TLS stream in an unknown state, so after one every flush reports the connection completed
/// and the fast path closes it.
/// </remarks>
internal sealed class TlsRecordWriter : GatheringWriter
{
    // On Linux SslStream hands OpenSSL up to 32 KiB per call (StreamSizes.MaximumMessage) and
    // OpenSSL cuts records of 16 KiB: one write per buffer, two full records per write.
    internal const int BufferSize = 32 * 1024;

    private readonly SslStream _stream;

    public TlsRecordWriter(SslStream stream)
        : base(BufferSize) => _stream = stream;

    /// <summary>
    /// Appends <paramref name="length"/> bytes of <paramref name="body"/> from
    /// <paramref name="start"/>, an array that never changes (a representation's content). The
    /// writes to the stream stay what copying would make them, whole buffers of
    /// <see cref="BufferSize"/> bytes: the buffer being written is filled up from the body, the
    /// whole buffers' worth that follows is handed to the stream from the body's own array, and
    /// the rest is copied into a new buffer for what comes after. At 417 KB over HTTPS/1.1 the
    /// copy this saves was 4% of the server's samples (docs/performance.md, "TLS bodies from their
    /// own arrays").
    /// </summary>
    public void WriteBody(byte[] body, int start, int length)
    {
        var space = Space.Length;
        var lent = (length - Math.Min(space, length)) / BufferSize * BufferSize;
        if (lent == 0)
        {
            Append(body.AsSpan(start, length));
            return;
        }

        // The buffer holding the head, filled to its end from the body; rented arrays may be
        // longer than asked, and a lent piece starts where the buffer ends, as a copy would.
        var fill = Math.Min(space, length);
        if (fill != 0)
        {
            body.AsSpan(start, fill).CopyTo(Space);
            Advance(fill);
        }

        AppendBody(new Piece(body, start + fill, lent, rented: false, file: null));
        var rest = length - fill - lent;
        if (rest != 0)
        {
            Append(body.AsSpan(start + fill + lent, rest));
        }
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

        var token = Cancellation.Token(cancellationToken);
        EndBuffer();
        if (Pieces.Count != 1)
        {
            return WriteAllAsync(default, started: false, token);
        }

        // The common case, one buffer: written without an async state machine when the write
        // completes at once.
        var only = Pieces[0];
        var pending = _stream.WriteAsync(only.Array.AsMemory((int)only.Start, (int)only.Length), token);
        if (pending.IsCompletedSuccessfully)
        {
            Clear();
            return default;
        }

        return WriteAllAsync(pending, started: true, token);
    }

    /// <summary>Awaits <paramref name="current"/>, the only piece's write already under way (<paramref name="started"/>), or else writes every piece in order.</summary>
    /// <remarks>Its state machine comes from a pool: it waits whenever the socket is slower than the responses.</remarks>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<FlushResult> WriteAllAsync(ValueTask current, bool started, CancellationToken token)
    {
        Cancellation.Waiting = true;
        try
        {
            if (started)
            {
                await current;
            }
            else
            {
                foreach (var piece in Pieces)
                {
                    await _stream.WriteAsync(piece.Array.AsMemory((int)piece.Start, (int)piece.Length), token);
                }
            }

            Clear();
            return default;
        }
        catch (OperationCanceledException)
        {
            Broken = true;
            return new FlushResult(isCanceled: true, isCompleted: false);
        }
        finally
        {
            Cancellation.Waiting = false;
        }
    }
}
