using System.Buffers;
using System.Net;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Threading.Channels;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Peregrine.Http1;
using Peregrine.Interop;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Connections;

/// <summary>Accepts connections and hands each to Kestrel once its ClientHello has said whether it offers <c>h2</c>.</summary>
internal sealed partial class ClientHelloListener : IConnectionListener
{
    /// <summary>
    /// How long a connection may take to send its ClientHello before it is handed on unsorted
    /// (inline); Kestrel's handshake timeout runs from then. A TLS client sends the ClientHello
    /// as soon as TCP connects.
    /// </summary>
    public static readonly TimeSpan DefaultPeekTimeout = TimeSpan.FromSeconds(1);

    // A ClientHello with post-quantum key shares is about 1.8 KB; one of 4 KiB is far beyond
    // what clients send. Larger ones are handed on unsorted.
    private const int PeekBytes = 4096;

    // Connections waiting for their ClientHello at once; beyond this, new ones are handed on
    // unsorted, so a flood of silent connections costs Kestrel's limits, not this listener's.
    private const int MaxWaiting = 1024;

    // The ClientHello arrived in part: look again after this long.
    private static readonly TimeSpan s_partialRetry = TimeSpan.FromMilliseconds(5);

    // How long a connection that spoke plain HTTP is kept, to send its 400 and let the client
    // close first; and how many of its bytes are read meanwhile, at most.
    private static readonly TimeSpan s_plainHttpLinger = TimeSpan.FromSeconds(1);
    private const int PlainHttpReadLimit = 64 * 1024;

    // nginx's words for the same mistake, which people search for. Closed after it: the rest of
    // what the client sent is not HTTP this server will read.
    private static readonly byte[] s_plainHttpBody = "400 Bad Request: The plain HTTP request was sent to HTTPS port. Use an https:// address.\n"u8.ToArray();
    private static readonly byte[] s_plainHttpHead = System.Text.Encoding.ASCII.GetBytes(
        $"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {s_plainHttpBody.Length}\r\nConnection: close\r\nDate: ");

    // HTTP/2's connection preface (RFC 9113 §3.4), with which prior-knowledge h2c starts.
    private static readonly byte[] s_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray();

    private readonly Socket _socket;
    private readonly SocketConnectionContextFactory _inline;
    private readonly SocketConnectionContextFactory _queued;
    private readonly TimeSpan _peekTimeout;
    private readonly bool _answersPlainHttp;
    private readonly bool _cleartext;
    private readonly Channel<ConnectionContext> _ready = Channel.CreateUnbounded<ConnectionContext>(new UnboundedChannelOptions { SingleWriter = false });
    private readonly CancellationTokenSource _stopping = new();
    private readonly Task _accepting;
    private readonly CleartextReactor? _reactor;
    private readonly TlsTerminator? _terminator;
    private readonly MemoryPool<byte> _pool;
    private int _waiting;
    private long _http2;
    private long _other;

    /// <param name="answersPlainHttp">Whether a connection whose first byte is a letter (plain HTTP on this TLS port) gets 400 here rather than being handed on.</param>
    /// <param name="cleartext">Whether connections are sorted by HTTP/2's connection preface (a cleartext server) rather than by their ClientHello.</param>
    /// <param name="fastPath">On a cleartext server on Linux, the fast path that a <see cref="CleartextReactor"/> answers from before Kestrel; null for none.</param>
    /// <param name="terminator">On a TLS server, the handshake for connections whose ClientHello offers only HTTP/1.1, done here rather than by Kestrel; null for none.</param>
    public ClientHelloListener(Socket socket, ILogger logger, IMemoryPoolFactory<byte> pools, TimeSpan peekTimeout, bool answersPlainHttp = false, bool cleartext = false, Http1FastPath? fastPath = null, TlsTerminator? terminator = null)
    {
        _socket = socket;
        var deferred = DeferAccept(socket);
        _terminator = cleartext ? null : terminator;
        _pool = pools.Create();
        _peekTimeout = peekTimeout;
        _answersPlainHttp = answersPlainHttp;
        _cleartext = cleartext;
        EndPoint = socket.LocalEndPoint!;
        _inline = new SocketConnectionContextFactory(ClientHelloTransportFactory.Options(inline: true, pools), logger);

        // Prior-knowledge h2c takes its memory in 32 KiB blocks on a cleartext server too, as
        // HTTP/2 over TLS does: each stream's response pipe holds a 31 KB body in one block
        // rather than eight of Kestrel's 4 KiB ones. HTTP/1.1 keeps Kestrel's pool.
        _queued = new SocketConnectionContextFactory(ClientHelloTransportFactory.Options(inline: false, cleartext ? new LargeBlockMemoryPool.Factory() : pools), logger);
        if (cleartext && fastPath is { Answers: true } && PlatformParts.IsNative)
        {
            // The reactor accepts, on threads of its own; it hands on what it does not answer.
            _reactor = new CleartextReactor(socket, fastPath, HandOn, logger, Environment.ProcessorCount, deferred);
            _accepting = Task.CompletedTask;
        }
        else
        {
            _accepting = AcceptLoopAsync();
        }
    }

    public EndPoint EndPoint { get; }

    /// <summary>
    /// Has the kernel hold a new connection until its first bytes come (TCP_DEFER_ACCEPT), as
    /// nginx's <c>listen … deferred</c>: every client of this server speaks first (a request, h2c's
    /// preface, a ClientHello), so the wake that accepts a connection finds them there, and the
    /// sorting peek and the reactor's first read return at once. A client that sends nothing is
    /// accepted all the same after about a second, when the kernel sends its SYN-ACK again and the
    /// client's ACK completes the connection; the timeouts for its first bytes run from then.
    /// With a new connection for each request, a server woke twice for most of them without it,
    /// once for the connection and once for its request (docs/performance.md, "The cleartext
    /// reactor"). False where the kernel has no such option; connections are then accepted as
    /// they come.
    /// </summary>
    internal static bool DeferAccept(Socket socket)
    {
        if (!OperatingSystem.IsLinux())
        {
            return false;
        }

        var seconds = 1;
        try
        {
            socket.SetRawSocketOption(Libc.ProtocolTcp, Libc.TcpDeferAccept, MemoryMarshal.AsBytes(new ReadOnlySpan<int>(ref seconds)));
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }

    /// <summary>Connections handed on with Kestrel's default scheduling, because they offered h2.</summary>
    internal long Http2Connections => Interlocked.Read(ref _http2);

    /// <summary>Connections handed on with inline scheduling.</summary>
    internal long OtherConnections => Interlocked.Read(ref _other);

    public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        try
        {
            return await _ready.Reader.ReadAsync(cancellationToken);
        }
        catch (ChannelClosedException)
        {
            // Unbound: Kestrel stops accepting.
            return null;
        }
    }

    private async Task AcceptLoopAsync()
    {
        while (true)
        {
            Socket accepted;
            try
            {
                accepted = await _socket.AcceptAsync(_stopping.Token);
            }
            catch (SocketException ex) when (ex.SocketErrorCode == SocketError.ConnectionReset)
            {
                // The client gave up before it was accepted (Kestrel's listener goes on too).
                continue;
            }
            catch (Exception) when (_stopping.IsCancellationRequested)
            {
                break;
            }
            catch (SocketException)
            {
                // The listening socket failed (out of descriptors, say): Kestrel's listener
                // stops as well, and so does the endpoint.
                break;
            }

            accepted.NoDelay = true;
            if (Interlocked.Increment(ref _waiting) > MaxWaiting)
            {
                Interlocked.Decrement(ref _waiting);
                HandOn(accepted, ClientOffer.Unknown);
                continue;
            }

            _ = SortAsync(accepted);
        }

        _ready.Writer.TryComplete();
    }

    /// <summary>The time a connection has to send its first bytes, from its first wait for them.</summary>
    private CancellationTokenSource StartPeekTimeout()
    {
        var timeout = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
        timeout.CancelAfter(_peekTimeout);
        return timeout;
    }

    private async Task SortAsync(Socket accepted)
    {
        var offer = ClientOffer.Unknown;
        var plainHttp = false;

        // On a cleartext server the preface's 24 bytes decide; a ClientHello takes more.
        var size = _cleartext ? s_preface.Length : PeekBytes;
        var buffer = ArrayPool<byte>.Shared.Rent(size);
        CancellationTokenSource? timeout = null;
        try
        {
            while (true)
            {
                int peeked;
                if (accepted.Available > 0)
                {
                    // Bytes are waiting (the common case: a client sends as soon as it has
                    // connected), so the peek returns at once, and no timer is needed.
                    peeked = accepted.Receive(buffer, 0, size, SocketFlags.Peek);
                }
                else
                {
                    timeout ??= StartPeekTimeout();
                    peeked = await accepted.ReceiveAsync(buffer.AsMemory(0, size), SocketFlags.Peek, timeout.Token);
                }

                offer = peeked == 0 ? ClientOffer.Unknown
                    : _cleartext ? ReadPreface(buffer.AsSpan(0, peeked))
                    : ClientHello.Read(buffer.AsSpan(0, peeked));
                if (offer != ClientOffer.Incomplete || peeked == size)
                {
                    // A TLS record starts with its type (22 for a handshake); an HTTP request
                    // with its method, in letters (RFC 9112 §3): http:// to the HTTPS port.
                    plainHttp = _answersPlainHttp && offer == ClientOffer.Unknown && peeked > 0 && char.IsAsciiLetter((char)buffer[0]);
                    break;
                }

                // A peek returns at once while bytes wait, so wait a little for the rest.
                timeout ??= StartPeekTimeout();
                await Task.Delay(s_partialRetry, timeout.Token);
            }
        }
        catch (OperationCanceledException)
        {
            // Silent for too long, or the server is stopping: Kestrel's timeouts decide.
        }
        catch (SocketException)
        {
            // Reset by the client: Kestrel sees that on its first read.
        }
        finally
        {
            timeout?.Dispose();
            ArrayPool<byte>.Shared.Return(buffer);
        }

        if (offer == ClientOffer.Http11 && _terminator is not null)
        {
            // Still counted as waiting (see TerminateAsync).
            await TerminateAsync(accepted);
            return;
        }

        Interlocked.Decrement(ref _waiting);
        if (plainHttp)
        {
            await AnswerPlainHttpAsync(accepted);
            return;
        }

        HandOn(accepted, offer);
    }

    /// <summary>
    /// HTTP/1.1 over TLS: the handshake is done here and Kestrel gets the connection decrypted
    /// (<see cref="TlsTerminator"/>). The connection counts among those waiting until then, so
    /// the listener's bound on those bounds handshakes too, and stopping waits for them.
    /// </summary>
    private async Task TerminateAsync(Socket accepted)
    {
        ConnectionContext? connection;
        try
        {
            connection = await _terminator!.HandshakeAsync(accepted, _pool, _stopping.Token);
        }
        finally
        {
            Interlocked.Decrement(ref _waiting);
        }

        if (connection is not null)
        {
            Interlocked.Increment(ref _other);
            Ready(connection);
        }
    }

    /// <summary>
    /// Whether a cleartext connection starts with HTTP/2's connection preface (RFC 9113 §3.4),
    /// prior-knowledge h2c, which Kestrel answers with HTTP/2: <see cref="ClientOffer.Http2"/>;
    /// <see cref="ClientOffer.Incomplete"/> while the bytes so far are its start; anything else is
    /// HTTP/1.1 or not HTTP, and Kestrel decides.
    /// </summary>
    internal static ClientOffer ReadPreface(ReadOnlySpan<byte> first)
    {
        var preface = s_preface.AsSpan();
        if (first.Length >= preface.Length)
        {
            return first.StartsWith(preface) ? ClientOffer.Http2 : ClientOffer.Unknown;
        }

        return preface.StartsWith(first) ? ClientOffer.Incomplete : ClientOffer.Unknown;
    }

    /// <summary>
    /// Answers a cleartext HTTP request on the TLS port with 400 and a line saying so, as nginx
    /// does, rather than the TLS handshake's silent close, which a browser shows as an empty
    /// reply. Kestrel never sees the connection.
    /// </summary>
    private async Task AnswerPlainHttpAsync(Socket socket)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(PeekBytes);
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(_stopping.Token);
            timeout.CancelAfter(s_plainHttpLinger);

            // What the client sent is read first, and after the answer until it closes (nginx's
            // lingering close): a socket closed with unread bytes sends RST, which can make the
            // client drop the answer before reading it. Bounded in time and bytes.
            var read = 0;
            while (socket.Available > 0 && read < PlainHttpReadLimit)
            {
                read += await socket.ReceiveAsync(buffer.AsMemory(0, PeekBytes), SocketFlags.None, timeout.Token);
            }

            var length = s_plainHttpHead.Length;
            s_plainHttpHead.CopyTo(buffer, 0);
            length += System.Text.Encoding.ASCII.GetBytes(DateTime.UtcNow.ToString("r", System.Globalization.CultureInfo.InvariantCulture), buffer.AsSpan(length));
            "\r\n\r\n"u8.CopyTo(buffer.AsSpan(length));
            length += 4;
            s_plainHttpBody.CopyTo(buffer.AsSpan(length));
            length += s_plainHttpBody.Length;
            await socket.SendAsync(buffer.AsMemory(0, length), SocketFlags.None, timeout.Token);
            socket.Shutdown(SocketShutdown.Send);

            while (read < PlainHttpReadLimit && await socket.ReceiveAsync(buffer.AsMemory(0, PeekBytes), SocketFlags.None, timeout.Token) is > 0 and var more)
            {
                read += more;
            }
        }
        catch (OperationCanceledException)
        {
            // The client kept the connection open past the linger, or the server is stopping.
        }
        catch (SocketException)
        {
            // The client went away first.
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
            socket.Dispose();
        }
    }

    public async ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        await _stopping.CancelAsync();

        // The reactor's threads stop (closing the idle connections they hold, and handing
        // those still sending to Kestrel, through the channel, which is still open) before the
        // listening socket they accept from goes.
        _reactor?.Dispose();
        _socket.Dispose();
        await _accepting;
        if (_reactor is not null)
        {
            _ready.Writer.TryComplete();
        }
    }

    public async ValueTask DisposeAsync()
    {
        await UnbindAsync();

        // Peeks end at once when stopping; let them hand on (and so close) what they hold
        // before the factories go.
        for (var waited = 0; Volatile.Read(ref _waiting) > 0 && waited < 100; waited++)
        {
            await Task.Delay(10);
        }

        // Connections sorted and not taken by Kestrel are closed.
        while (_ready.Reader.TryRead(out var connection))
        {
            connection.Abort();
            await connection.DisposeAsync();
        }

        _inline.Dispose();
        _queued.Dispose();
        _stopping.Dispose();
    }
}
