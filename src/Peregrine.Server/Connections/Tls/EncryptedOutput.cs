using System.Buffers;
using System.IO.Pipelines;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Connections;
using Peregrine.Http1;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// The output of a TLS connection below its <see cref="System.Net.Security.SslStream"/>: each
/// encrypted write goes to the socket from the stream's own buffer, whereas Kestrel's socket
/// transport copies it into the connection's output pipe and sends it from there on the next turn
/// of its send loop. The stream writes through Kestrel's <c>DuplexPipeStream</c>, which calls
/// <see cref="WriteAsync"/> and awaits it before it reuses the buffer, so nothing needs copying
/// (docs/performance.md, "TLS records sent from the stream's buffer").
/// </summary>
/// <remarks>
/// Installed by <see cref="ClientHelloListener"/> as the connection's transport output when it
/// hands on a connection whose ClientHello offers only HTTP/1.1 to Kestrel's TLS (with
/// <c>--kestrel-tls</c>; otherwise the listener ends such a connection's TLS itself, and
/// <see cref="SocketStream"/> sends the same way); only the TLS layer writes to that output. Kestrel's transport keeps its own pipes: its
/// send loop waits on an output that stays empty, and ends when the connection is disposed, as
/// ever. A write waits until the kernel has taken every byte, so a client that stops reading holds
/// the write, and Kestrel's data-rate and keep-alive timeouts (which time the flushes above TLS)
/// abort the connection as they would through the pipe; the abort closes the socket and ends the
/// send. A failed send aborts the connection and reports the output completed, as Kestrel's pipe
/// does once its send loop has failed.
/// </remarks>
internal sealed class EncryptedOutput : PipeWriter
{
    private readonly Socket _socket;
    private readonly ConnectionContext _connection;

    // Bytes written through GetMemory/Advance and not yet flushed (the TLS layer writes whole
    // buffers through WriteAsync; this is for any other writer).
    private byte[]? _buffer;
    private int _buffered;

    private volatile bool _cancelNext;
    private bool _failed;

    public EncryptedOutput(Socket socket, ConnectionContext connection)
    {
        _socket = socket;
        _connection = connection;
    }

    /// <summary>The transport with this writer as its output.</summary>
    public static IDuplexPipe Install(ConnectionContext connection, Socket socket)
        => new DuplexPipe(connection.Transport.Input, new EncryptedOutput(socket, connection));

    public override bool CanGetUnflushedBytes => true;

    public override long UnflushedBytes => _buffered;

    public override void Advance(int bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        if (_buffer is null || bytes > _buffer.Length - _buffered)
        {
            throw new ArgumentOutOfRangeException(nameof(bytes));
        }

        _buffered += bytes;
    }

    public override Memory<byte> GetMemory(int sizeHint = 0) => Reserve(sizeHint).AsMemory(_buffered);

    public override Span<byte> GetSpan(int sizeHint = 0) => Reserve(sizeHint).AsSpan(_buffered);

    private byte[] Reserve(int sizeHint)
    {
        var needed = Math.Max(sizeHint, 1);
        if (_buffer is { } buffer && buffer.Length - _buffered >= needed)
        {
            return buffer;
        }

        var larger = ArrayPool<byte>.Shared.Rent(Math.Max(_buffered + needed, 4096));
        if (_buffer is not null)
        {
            _buffer.AsSpan(0, _buffered).CopyTo(larger);
            ArrayPool<byte>.Shared.Return(_buffer);
        }

        return _buffer = larger;
    }

    public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        if (_buffered != 0)
        {
            // Something else wrote first: keep the order.
            source.Span.CopyTo(GetSpan(source.Length));
            Advance(source.Length);
            return FlushAsync(cancellationToken);
        }

        return SendAsync(source, cancellationToken);
    }

    public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        if (_buffered == 0)
        {
            var canceled = _cancelNext;
            _cancelNext = false;
            return new ValueTask<FlushResult>(new FlushResult(isCanceled: canceled, isCompleted: _failed));
        }

        return FlushBufferAsync(cancellationToken);
    }

    private async ValueTask<FlushResult> FlushBufferAsync(CancellationToken cancellationToken)
    {
        var result = await SendAsync(_buffer.AsMemory(0, _buffered), cancellationToken);
        ReturnBuffer();
        return result;
    }

    private ValueTask<FlushResult> SendAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        if (_failed)
        {
            return new ValueTask<FlushResult>(new FlushResult(isCanceled: false, isCompleted: true));
        }

        var canceled = _cancelNext;
        _cancelNext = false;
        if (source.IsEmpty)
        {
            return new ValueTask<FlushResult>(new FlushResult(isCanceled: canceled, isCompleted: false));
        }

        var sending = SocketSends.SendAllAsync(_socket, source, cancellationToken);
        if (sending.IsCompletedSuccessfully)
        {
            return new ValueTask<FlushResult>(Sent(sending.Result, canceled));
        }

        return SentAsync(sending, canceled);
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private async ValueTask<FlushResult> SentAsync(ValueTask<Exception?> sending, bool canceled)
    {
        var failure = await sending;
        try
        {
            return Sent(failure, canceled || _cancelNext);
        }
        finally
        {
            _cancelNext = false;
        }
    }

    private FlushResult Sent(Exception? failure, bool canceled)
        => failure is null ? new FlushResult(isCanceled: canceled, isCompleted: _failed) : Fail(failure);

    private FlushResult Fail(Exception ex)
    {
        _failed = true;
        _connection.Abort(new ConnectionAbortedException("The connection failed while sending.", ex));
        return new FlushResult(isCanceled: false, isCompleted: true);
    }

    /// <summary>
    /// As a pipe does, makes the flush under way (or else the next one) report itself cancelled.
    /// A send cannot be taken back once part of a record has gone, so a send still waiting for
    /// the socket is not stopped: the TLS layer never cancels its writes this way, and Kestrel's
    /// timeouts stop a stalled one by aborting the connection.
    /// </summary>
    public override void CancelPendingFlush() => _cancelNext = true;

    public override void Complete(Exception? exception = null)
    {
        ReturnBuffer();
        _failed = true;
    }

    private void ReturnBuffer()
    {
        if (_buffer is not null)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }

        _buffered = 0;
    }
}
