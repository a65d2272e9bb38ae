using System.Buffers;
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
internal sealed class TlsRecordWriter : PipeWriter
{
    // On Linux SslStream hands OpenSSL up to 32 KiB per call (StreamSizes.MaximumMessage) and
    // OpenSSL cuts records of 16 KiB: one write per buffer, two full records per write.
    internal const int BufferSize = 32 * 1024;

    private readonly SslStream _stream;

    // Buffers filled, and bodies lent whole (WriteBody), in the order they are to be written:
    // Rented says whether the array is one of this writer's, to go back to the pool.
    private readonly List<(byte[] Array, int Offset, int Length, bool Rented)> _full = [];
    private byte[]? _current;
    private int _written;
    private long _unflushed;
    private readonly FlushCancellation _cancel = new();
    private bool _broken;

    public TlsRecordWriter(SslStream stream) => _stream = stream;

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _unflushed;

    public override void Advance(int bytes)
    {
        _written += bytes;
        _unflushed += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_written);

    public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_written);

    private byte[] Reserve(int sizeHint)
    {
        if (_current is { } current && current.Length - _written >= Math.Max(sizeHint, 1))
        {
            return current;
        }

        EndBuffer();
        return _current = ArrayPool<byte>.Shared.Rent(Math.Max(sizeHint, BufferSize));
    }

    /// <summary>Closes the buffer being written into: it joins those to write, or goes back to the pool empty.</summary>
    private void EndBuffer()
    {
        if (FilledBuffer.Close(ref _current, ref _written, out var length) is { } filled)
        {
            _full.Add((filled, 0, length, true));
        }
    }

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
        var space = _current is null ? 0 : _current.Length - _written;
        var lent = (length - Math.Min(space, length)) / BufferSize * BufferSize;
        if (lent == 0)
        {
            this.Write(body.AsSpan(start, length));
            return;
        }

        // The buffer holding the head, filled to its end from the body; rented arrays may be
        // longer than asked, and a lent piece starts where the buffer ends, as a copy would.
        var fill = Math.Min(space, length);
        if (fill != 0)
        {
            body.AsSpan(start, fill).CopyTo(_current!.AsSpan(_written));
            Advance(fill);
        }

        EndBuffer();
        _full.Add((body, start + fill, lent, false));
        _unflushed += lent;
        var rest = length - fill - lent;
        if (rest != 0)
        {
            this.Write(body.AsSpan(start + fill + lent, rest));
        }
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

        var token = _cancel.Token(cancellationToken);
        if (_full.Count != 0)
        {
            return WriteAllAsync(default, token);
        }

        // The common case, one buffer: written without an async state machine when the write
        // completes at once.
        var pending = _stream.WriteAsync(_current.AsMemory(0, _written), token);
        if (pending.IsCompletedSuccessfully)
        {
            Reset();
            return default;
        }

        return WriteAllAsync(pending, token);
    }

    /// <summary>Awaits <paramref name="current"/>, the only buffer's write already under way, or else writes every buffer in order.</summary>
    /// <remarks>Its state machine comes from a pool: it waits whenever the socket is slower than the responses.</remarks>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<FlushResult> WriteAllAsync(ValueTask current, CancellationToken token)
    {
        _cancel.Waiting = true;
        try
        {
            if (_full.Count == 0)
            {
                await current;
            }
            else
            {
                foreach (var (array, offset, length, _) in _full)
                {
                    await _stream.WriteAsync(array.AsMemory(offset, length), token);
                }

                if (_written != 0)
                {
                    await _stream.WriteAsync(_current.AsMemory(0, _written), token);
                }
            }

            Reset();
            return default;
        }
        catch (OperationCanceledException)
        {
            return Broken();
        }
        finally
        {
            _cancel.Waiting = false;
        }
    }

    private FlushResult Broken()
    {
        _broken = true;
        return new FlushResult(isCanceled: true, isCompleted: false);
    }

    /// <summary>Cancels a write in flight (the client stopped reading); with none in flight there is nothing to cancel.</summary>
    public override void CancelPendingFlush()
    {
        _cancel.Cancel();
    }

    /// <summary>Returns the buffers; the stream stays open for Kestrel.</summary>
    public override void Complete(Exception? exception = null)
    {
        Reset();
        _cancel.Dispose();
    }

    private void Reset()
    {
        foreach (var (array, _, _, rented) in _full)
        {
            if (rented)
            {
                ArrayPool<byte>.Shared.Return(array);
            }
        }

        _full.Clear();
        _written = 0;
        _unflushed = 0;

        // The last buffer goes back too: an idle keep-alive connection holds none.
        if (_current is not null)
        {
            ArrayPool<byte>.Shared.Return(_current);
            _current = null;
        }
    }
}
