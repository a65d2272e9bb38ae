using System.Net.Sockets;
using System.Runtime.InteropServices;
using Peregrine.Http1;
using Peregrine.Interop;

namespace Peregrine.Server.Connections;

/// <summary>
/// The cleartext server's connections, read with epoll(7) on threads of its own and answered by
/// the fast path there, the way nginx reads: a read that returns less than was asked for means
/// the socket is drained, and the next read waits for epoll to say more has come. Kestrel's
/// socket transport reads once more after every request (a zero-byte read, which the socket
/// engine tries at once and which fails) and runs each read through its pipe, its scheduler and
/// the socket engine's queues; at 0 B that was about a tenth of the server's time per request
/// (docs/performance.md, "The cleartext reactor").
/// </summary>
/// <remarks>
/// A connection stays here while each read holds complete requests that the fast path answers.
/// A response the socket has no room for is sent as the socket takes it, as nginx sends: the
/// rest when epoll says there is room (EPOLLOUT), and the connection's next requests are read
/// only after that, under Kestrel's minimum response data rate. Anything else hands the
/// connection to Kestrel as it stands, through <see cref="HandOn"/>: a request the fast path
/// does not answer, a head that has not all arrived, the connection preface of HTTP/2, and the
/// rarer shapes of a response still being sent with more read behind it. What was read and not
/// answered goes with it (Kestrel reads it first), and so does the connection's
/// <see cref="ConnectionState"/>, with output not yet sent; the fast path then goes on where the
/// reactor stopped, under Kestrel's timeouts. Idle connections here are closed after Kestrel's
/// keep-alive timeout, as Kestrel closes its own. When the listener stops, idle ones are closed
/// and those still sending are handed to Kestrel to finish, closing after their response, as
/// Kestrel ends its own connections gracefully. An idle connection holds no buffer.
/// </remarks>
internal sealed unsafe partial class CleartextReactor : IDisposable
{
    /// <summary>A connection handed to Kestrel: its socket, bytes read and not answered, what the reactor leaves to the fast path, and whether it opened with HTTP/2's preface.</summary>
    public delegate void HandOnCallback(Socket socket, byte[]? prefix, ConnectionState? state, bool http2);

    public const string ThreadName = "Peregrine reactor";

    // A read: heads are far smaller (Kestrel's default limit for a whole head is 32 KiB, and a
    // head that does not fit goes to Kestrel), and pipelined requests are read in turns.
    private const int ReadSize = 16 * 1024;
    private const int MaxEvents = 256;

    // What is read and dropped before closing a connection whose last request said close
    // (16 reads, 256 KiB): a client that sends more than that after it is not waited for.
    private const int MaxDiscardReads = 16;

    // Keep-alive timeouts are looked for once a second while connections are held, as Kestrel's
    // heartbeat does; with none held the threads sleep until a connection comes.
    private const int SweepMilliseconds = 1000;

    // Out of descriptors or memory at accept: wait this long before accepting again.
    private const int AcceptPauseMilliseconds = 1000;

    private readonly Http1FastPath _fastPath;
    private readonly HandOnCallback _handOn;
    private readonly ILogger _logger;
    private readonly int _listen;

    // The kernel holds a new connection until its first bytes come, so a connection is read as
    // soon as it is accepted, and joins the loop's epoll set only if it stays open after that read.
    private readonly bool _deferred;
    private readonly long _keepAliveMilliseconds;
    private readonly long _firstBytesMilliseconds;
    private readonly Loop[] _loops;
    private int _disposed;

    /// <param name="listen">The bound, listening socket; it must outlive the reactor.</param>
    /// <param name="threads">Loops, each with its own epoll set; each accepts for itself.</param>
    /// <param name="deferred">
    /// Whether the listening socket holds new connections until their first bytes come
    /// (<see cref="ClientHelloListener.DeferAccept"/>): then a connection is read as soon as it
    /// is accepted, in the same wake, where a connection accepted without its request would
    /// cost a read that finds nothing.
    /// </param>
    public CleartextReactor(Socket listen, Http1FastPath fastPath, HandOnCallback handOn, ILogger logger, int threads, bool deferred)
    {
        _fastPath = fastPath;
        _handOn = handOn;
        _logger = logger;
        _listen = (int)listen.SafeHandle.DangerousGetHandle();
        _keepAliveMilliseconds = (long)Math.Min(fastPath.KeepAliveTimeout.TotalMilliseconds, long.MaxValue / 2);

        // A new connection must send its first bytes within the request-headers timeout, as the
        // server's prior-knowledge check (Hosting/Http2PriorKnowledge) requires of the others.
        _firstBytesMilliseconds = (long)Math.Min(fastPath.HeadersTimeout.TotalMilliseconds, long.MaxValue / 2);

        // Accepts happen on the loops without waiting: a listening socket made by .NET is
        // blocking until it is used asynchronously, which this one never is.
        var flags = Libc.fcntl(_listen, Libc.GetStatusFlags, 0);
        if (flags < 0 || Libc.fcntl(_listen, Libc.SetStatusFlags, flags | Libc.NonBlocking) < 0)
        {
            throw new SocketException(Marshal.GetLastPInvokeError());
        }

        _deferred = deferred;
        _loops = new Loop[threads];
        try
        {
            for (var i = 0; i < threads; i++)
            {
                _loops[i] = new Loop(this);
            }
        }
        catch
        {
            Dispose();
            throw;
        }

        foreach (var loop in _loops)
        {
            loop.Start();
        }
    }

    /// <summary>Stops accepting, closes the idle connections held and hands those still sending to Kestrel to finish; those handed on before are Kestrel's. Once only.</summary>
    public void Dispose()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        foreach (var loop in _loops)
        {
            loop?.Stop();
        }

        foreach (var loop in _loops)
        {
            loop?.Join();
        }
    }

    /// <summary>
    /// A connection the reactor holds: a bare descriptor, which only its loop uses and closes. A
    /// <see cref="Socket"/> is made for it only when it goes to Kestrel (Loop.HandOn):
    /// making one costs ten system calls (its type, family, protocol, addresses and flags).
    /// </summary>
    /// <remarks>
    /// Its protocol state (first request, output, closing) is the <see cref="ConnectionState"/> it
    /// derives from, which decides each step and goes to Kestrel with it; what it adds is the
    /// epoll shell's.
    /// </remarks>
    private sealed class Connection(int fd, long now) : ConnectionState(new SocketOutput(fd), inReactor: true)
    {
        public int Fd { get; } = fd;

        /// <summary>Nothing read yet: the first read may be HTTP/2's connection preface.</summary>
        public bool Fresh = true;

        public long LastActive = now;

        /// <summary>A response waits for room in the socket (<see cref="ConnectionStep.Send"/>); nothing more is read until it has gone.</summary>
        public bool Sending;

        /// <summary>While sending: input may wait unread in the socket, and no later edge of epoll would say so.</summary>
        public bool Unread;

        /// <summary>While sending: the client closed its side, or the connection failed.</summary>
        public bool Ended;

        /// <summary>While sending: when the client must have taken the response, by Kestrel's minimum response data rate.</summary>
        public long SendDeadline;

        /// <summary>EPOLLOUT is asked for: since the first response that did not fit.</summary>
        public bool Writable;

        /// <summary>In the loop's epoll set: from its accept on, or, accepted with its request, once it stays open after its first read.</summary>
        public bool Registered;

        /// <summary>
        /// Waiting for a body's pages to be read into the page cache (Http1FastPath.Outcome.Warm):
        /// the bytes read from the request on, answered when the loop resumes the connection.
        /// Nothing more is read meanwhile; <see cref="Unread"/> and <see cref="Ended"/> say what epoll reported.
        /// </summary>
        public byte[]? Parked;
    }

    [LoggerMessage(301, LogLevel.Warning, "Accepting connections failed ({Error}); trying again in {Pause} ms.")]
    private static partial void AcceptFailed(ILogger logger, string error, int pause);

    [LoggerMessage(303, LogLevel.Error, "A connection failed in the cleartext reactor, and was closed.")]
    private static partial void ConnectionFailed(ILogger logger, Exception exception);

    [LoggerMessage(304, LogLevel.Debug, "A client of the cleartext reactor did not take its response at the minimum data rate; the connection was closed.")]
    private static partial void TooSlow(ILogger logger);

    [LoggerMessage(302, LogLevel.Error, "A thread of the cleartext reactor stopped; its idle connections are closed, those still sending are handed to Kestrel, and the others' threads go on.")]
    private static partial void Stopped(ILogger logger, Exception exception);
}
