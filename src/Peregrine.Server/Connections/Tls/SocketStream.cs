using System.Buffers;
using System.Net.Security;
using System.Net.Sockets;
using System.Threading.Tasks.Sources;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// The socket under a <see cref="TerminatedConnection"/>'s <see cref="SslStream"/>: reads receive
/// from it and writes send to it, each awaited before the stream reuses its buffer, so nothing
/// is copied on the way.
/// </summary>
/// <remarks>
/// Kestrel's socket transport reads a connection all the time (it copies what arrives into the
/// input pipe), so it sees the client close while a request runs and fires the connection's
/// <c>ConnectionClosed</c>, which aborts the request. This stream reads when the TLS stream does;
/// and when a read it completed has run its continuation (the request, inline, on the socket's
/// thread) with no read under way after it (the request went on asynchronously), it watches the
/// socket: bytes that arrive meanwhile (a pipelined request) are received into a buffer of its
/// own, up to <see cref="WatchedBytesLimit"/>, which the next reads return first, and the end of
/// the input (a FIN or a reset) fires <c>ConnectionClosed</c>, as Kestrel's transport does. A
/// request answered inline, the common case, costs no watch.
/// </remarks>
internal sealed partial class SocketStream : Stream, IValueTaskSource<int>
{
    /// <summary>The most bytes received by the watch before a read takes them; beyond, the watch stops (the input's end is then seen by the reads).</summary>
    internal const int WatchedBytesLimit = 64 * 1024;

    private readonly Action _onReceived;
    private readonly Action _onReadable;
    private readonly Lock _lock = new();
    private ManualResetValueTaskSourceCore<int> _read;
    private ValueTask<int> _receiving;
    private bool _receivingIsEmpty;
    private ValueTask<int> _watched;
    private ConnectionAbortedException? _shutReason;
    private volatile bool _shut;
    private bool _sendFailed;

    // OnReceived is running the reader's continuation (on its thread): reads completed
    // meanwhile are looked at when it returns.
    private bool _inCallback;

    // Guarded by _lock: a read's receive under way; a watch under way; what the watch received
    // and no read took yet; the input's end the watch saw (with the reset, if it was one).
    private bool _inFlight;
    private bool _watching;
    private byte[]? _stash;
    private int _stashStart;
    private int _stashEnd;
    private bool _ended;
    private Exception? _endError;

    public SocketStream(Socket socket)
    {
        Socket = socket;
        _onReceived = OnReceived;
        _onReadable = OnReadable;
    }

    public Socket Socket { get; }

    /// <summary>The connection this stream is the bottom of, once made (after the handshake).</summary>
    internal TerminatedConnection? Connection { get; set; }

    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default)
    {
        lock (_lock)
        {
            if (_shut)
            {
                return ValueTask.FromException<int>(ShutException());
            }

            if (_stashEnd > _stashStart)
            {
                // What the watch received comes first. A zero-byte read learns that bytes wait.
                var count = Math.Min(buffer.Length, _stashEnd - _stashStart);
                _stash.AsSpan(_stashStart, count).CopyTo(buffer.Span);
                _stashStart += count;
                if (_stashStart == _stashEnd)
                {
                    ReturnStash();
                }

                return new ValueTask<int>(count);
            }

            if (_ended)
            {
                return _endError is { } error ? ValueTask.FromException<int>(error) : new ValueTask<int>(0);
            }

            _inFlight = true;
        }

        ValueTask<int> receiving;
        try
        {
            receiving = Socket.ReceiveAsync(buffer, SocketFlags.None, cancellationToken);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            ClearInFlight();
            return ValueTask.FromException<int>(ReadFailed(ex));
        }

        if (receiving.IsCompleted)
        {
            ClearInFlight();
            try
            {
                var received = receiving.GetAwaiter().GetResult();
                if (received == 0 && !buffer.IsEmpty)
                {
                    InputEnded();
                }
                else if (received > 0 && !_inCallback)
                {
                    // Bytes that were waiting: the caller goes on with them on this thread, and
                    // no continuation of this stream's returns afterwards to look whether a read
                    // follows; so look from the thread pool (the common case, a read completed
                    // inside OnReceived's continuation, is looked at there).
                    ThreadPool.UnsafeQueueUserWorkItem(static stream => stream.Watch(), this, preferLocal: false);
                }

                return new ValueTask<int>(received);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                return ValueTask.FromException<int>(ReadFailed(ex));
            }
        }

        // The receive waits for the client: its end runs the reader's continuation from
        // OnReceived, which looks afterwards whether a read is under way again.
        _read.Reset();
        _receiving = receiving;
        _receivingIsEmpty = buffer.IsEmpty;
        receiving.GetAwaiter().UnsafeOnCompleted(_onReceived);
        return new ValueTask<int>(this, _read.Version);
    }

    private void ClearInFlight()
    {
        lock (_lock)
        {
            _inFlight = false;
        }
    }

    private void OnReceived()
    {
        var receiving = _receiving;
        var empty = _receivingIsEmpty;
        _receiving = default;
        ClearInFlight();
        try
        {
            var received = receiving.GetAwaiter().GetResult();
            if (received == 0 && !empty)
            {
                InputEnded();
            }

            _inCallback = true;
            _read.SetResult(received);
        }
        catch (OperationCanceledException ex)
        {
            _read.SetException(ex);
            return;
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            _read.SetException(ReadFailed(ex));
            return;
        }
        finally
        {
            _inCallback = false;
        }

        // The continuation has run. With no read under way now, the request goes on without
        // the socket being read: watch it.
        Watch();
    }

    /// <summary>Starts a watch unless a read or a watch is under way, or there is nothing left to watch for.</summary>
    private void Watch()
    {
        while (true)
        {
            lock (_lock)
            {
                if (_inFlight || _watching || _shut || _ended || _stashEnd >= WatchedBytesLimit)
                {
                    return;
                }

                _watching = true;
            }

            ValueTask<int> readable;
            try
            {
                // A zero-byte receive completes when the socket is readable: bytes, or the end.
                readable = Socket.ReceiveAsync(Memory<byte>.Empty, SocketFlags.None);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                lock (_lock)
                {
                    _watching = false;
                }

                return;
            }

            if (!readable.IsCompleted)
            {
                _watched = readable;
                readable.GetAwaiter().UnsafeOnCompleted(_onReadable);
                return;
            }

            if (!Readable(readable))
            {
                return;
            }
        }
    }

    private void OnReadable()
    {
        var readable = _watched;
        _watched = default;
        if (Readable(readable))
        {
            Watch();
        }
    }

    /// <summary>The watch found the socket readable: takes what is there. True to watch again.</summary>
    private bool Readable(ValueTask<int> readable)
    {
        var ended = false;
        lock (_lock)
        {
            _watching = false;
            try
            {
                readable.GetAwaiter().GetResult();
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                // Closed here (an abort), or reset by the client: the read that follows says which.
                return false;
            }

            if (_inFlight || _shut)
            {
                // A read started meanwhile: it takes the bytes, or sees the end.
                return false;
            }

            // Readable says there are bytes or the end. Either is received now without
            // waiting; a socket not readable any more (nothing to take) is watched again.
            int received;
            SocketError error;
            try
            {
                if (!Socket.Poll(0, SelectMode.SelectRead))
                {
                    return true;
                }

                var room = Math.Max(1, Math.Min(Socket.Available, WatchedBytesLimit - _stashEnd));
                _stash ??= ArrayPool<byte>.Shared.Rent(WatchedBytesLimit);
                received = Socket.Receive(_stash, _stashEnd, room, SocketFlags.None, out error);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
            {
                return false;
            }
            if (error != SocketError.Success)
            {
                _ended = true;
                _endError = error is SocketError.ConnectionReset or SocketError.Shutdown
                    ? new ConnectionResetException(new SocketException((int)error).Message)
                    : new SocketException((int)error);
                ended = true;
            }
            else if (received == 0)
            {
                _ended = true;
                ended = true;
            }
            else
            {
                _stashEnd += received;
            }

            if (_stashEnd == _stashStart)
            {
                ReturnStash();
            }
        }

        if (ended)
        {
            InputEnded();
            return false;
        }

        return true;
    }

    private void ReturnStash()
    {
        if (_stash is not null)
        {
            ArrayPool<byte>.Shared.Return(_stash);
            _stash = null;
        }

        _stashStart = _stashEnd = 0;
    }

    private void InputEnded() => Connection?.FireClosed();

    /// <summary>What a read throws once the socket failed or was shut: the abort's reason, or a reset as Kestrel's transport reports one.</summary>
    private Exception ReadFailed(Exception ex)
    {
        if (_shut)
        {
            return ShutException();
        }

        InputEnded();
        return ex is SocketException { SocketErrorCode: SocketError.ConnectionReset or SocketError.Shutdown } reset
            ? new ConnectionResetException(reset.Message, reset)
            : ex;
    }

    private Exception ShutException() => _shutReason ?? (Exception)new ConnectionAbortedException("The connection was closed.");

    int IValueTaskSource<int>.GetResult(short token) => _read.GetResult(token);

    ValueTaskSourceStatus IValueTaskSource<int>.GetStatus(short token) => _read.GetStatus(token);

    void IValueTaskSource<int>.OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        => _read.OnCompleted(continuation, state, token, flags);

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            Shut(reason: null);
        }

        base.Dispose(disposing);
    }
}
