using System.Buffers;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Peregrine.Http1;
using Peregrine.Interop;
using Peregrine.Server.Connections.Tls;

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

    private sealed class Loop
    {
        private readonly CleartextReactor _owner;
        private readonly int _epoll;
        private readonly int _wake;
        private readonly Thread _thread;
        private readonly ConnectionTable _connections = new();
        private readonly byte[] _buffer = GC.AllocateUninitializedArray<byte>(ReadSize, pinned: true);
        private readonly byte* _read;

        // Connections whose bodies' pages are in, for the loop to resume: queued by the pool's
        // threads, which then wake the loop through _wake; closed with it under _wakeLock.
        private readonly System.Collections.Concurrent.ConcurrentQueue<Connection> _warmed = new();
        private readonly Lock _wakeLock = new();
        private bool _wakeClosed;
        private volatile bool _stopping;
        private long _now;
        private long _nextSweep;
        private long _acceptPausedUntil;

        public Loop(CleartextReactor owner)
        {
            _owner = owner;
            _read = (byte*)Unsafe.AsPointer(ref MemoryMarshal.GetArrayDataReference(_buffer));
            _epoll = Libc.epoll_create1(Libc.EpollCloseOnExec);
            if (_epoll < 0)
            {
                throw new SocketException(Marshal.GetLastPInvokeError());
            }

            _wake = Libc.eventfd(0, Libc.EventNonBlockCloseOnExec);
            if (_wake < 0 || !Add(_wake, Libc.EpollIn) || !Add(owner._listen, Libc.EpollIn | Libc.EpollExclusive))
            {
                var error = Marshal.GetLastPInvokeError();
                Libc.close(_epoll);
                if (_wake >= 0)
                {
                    Libc.close(_wake);
                }

                throw new SocketException(error);
            }

            _thread = new Thread(Run) { IsBackground = true, Name = ThreadName };
        }

        public void Start() => _thread.Start();

        public void Stop()
        {
            _stopping = true;
            Wake();
        }

        private void Wake()
        {
            lock (_wakeLock)
            {
                if (!_wakeClosed)
                {
                    ulong one = 1;
                    Libc.write(_wake, (byte*)&one, sizeof(ulong));
                }
            }
        }

        /// <summary>Waits for the thread, then closes the epoll set and the wake-up descriptor (only then: Stop, and warm-ups that end late, write to it).</summary>
        public void Join()
        {
            if (_thread.ThreadState != ThreadState.Unstarted)
            {
                _thread.Join();
            }

            Libc.close(_epoll);
            lock (_wakeLock)
            {
                _wakeClosed = true;
                Libc.close(_wake);
            }
        }

        private bool Add(int fd, uint events) => Control(Libc.EpollAdd, fd, events);

        private bool Control(int operation, int fd, uint events)
        {
            var data = stackalloc byte[16];
            *(uint*)data = events;
            *(ulong*)(data + Libc.EpollEventSize - sizeof(ulong)) = (ulong)fd;
            return Libc.epoll_ctl(_epoll, operation, fd, data) == 0;
        }

        private void Run()
        {
            var size = Libc.EpollEventSize;
            var events = stackalloc byte[MaxEvents * size];
            try
            {
                while (!_stopping)
                {
                    var timeout = _connections.Count == 0 && _acceptPausedUntil == 0 ? -1 : SweepMilliseconds;
                    var count = Libc.epoll_wait(_epoll, events, MaxEvents, timeout);
                    if (count < 0)
                    {
                        if (Marshal.GetLastPInvokeError() == Libc.Interrupted)
                        {
                            continue;
                        }

                        throw new SocketException(Marshal.GetLastPInvokeError());
                    }

                    _now = Environment.TickCount64;
                    for (var i = 0; i < count && !_stopping; i++)
                    {
                        var at = events + (i * size);
                        var fd = (int)*(ulong*)(at + size - sizeof(ulong));
                        if (fd == _owner._listen)
                        {
                            Accept();
                        }
                        else if (fd == _wake)
                        {
                            // Resets the counter (Stop wakes it too).
                            ulong counter;
                            Libc.read(_wake, (byte*)&counter, sizeof(ulong));
                            while (!_stopping && _warmed.TryDequeue(out var warmed))
                            {
                                try
                                {
                                    Resume(warmed);
                                }
                                catch (Exception ex)
                                {
                                    Failed(warmed, ex);
                                }
                            }
                        }
                        else if (_connections[fd] is { } connection)
                        {
                            try
                            {
                                Ready(connection, *(uint*)at);
                            }
                            catch (Exception ex)
                            {
                                Failed(connection, ex);
                            }
                        }
                    }

                    if (_now >= _nextSweep)
                    {
                        Sweep();
                        _nextSweep = _now + SweepMilliseconds;
                    }
                }
            }
            catch (Exception ex)
            {
                // Nothing here should throw; should it, the connections held are closed and the
                // others go on. Kestrel still has the ones handed to it.
                Stopped(_owner._logger, ex);
            }
            finally
            {
                foreach (var connection in _connections.ToList())
                {
                    if (connection.Sending)
                    {
                        // Kestrel finishes the response, then closes, as it ends its own
                        // connections when it stops (within the host's shutdown timeout).
                        connection.Stop();
                        HandOn(connection, null);
                    }
                    else
                    {
                        Close(connection);
                    }
                }
            }
        }

        private void Accept()
        {
            while (!_stopping)
            {
                var fd = Libc.accept4(_owner._listen, null, null, Libc.SocketNonBlockCloseOnExec);
                if (fd < 0)
                {
                    var error = Marshal.GetLastPInvokeError();
                    if (error is Libc.Interrupted or Libc.ConnectionAborted or Libc.ProtocolError)
                    {
                        // The client gave up before it was accepted.
                        continue;
                    }

                    if (error is Libc.TooManyFiles or Libc.TooManyFilesInSystem or Libc.NoBuffers or Libc.NoMemory)
                    {
                        // The connection stays in the backlog; the listening socket would wake
                        // this loop at once again. Accepting resumes after a pause.
                        Control(Libc.EpollDelete, _owner._listen, 0);
                        _acceptPausedUntil = _now + AcceptPauseMilliseconds;
                        AcceptFailed(_owner._logger, Marshal.GetPInvokeErrorMessage(error), AcceptPauseMilliseconds);
                    }

                    return;
                }

                // As Kestrel's transport sets it on every connection.
                var one = 1;
                if (Libc.setsockopt(fd, Libc.ProtocolTcp, Libc.TcpNoDelay, &one, sizeof(int)) != 0)
                {
                    // Reset before it could be set up.
                    Libc.close(fd);
                    continue;
                }

                // One connection a wake, as nginx without multi_accept: the listening socket is
                // level-triggered, so epoll reports it again while others wait. Accepting until
                // EAGAIN made one failed accept4 every 8 connections and spent more in accept4
                // (spin-lock waits on the listening socket among it): with a new connection for
                // each request, 8-10% more CPU a request (docs/performance.md, "The cleartext reactor").
                var connection = new Connection(fd, _now);
                _connections.Add(connection);
                if (!_owner._deferred)
                {
                    Register(connection);
                    return;
                }

                // Accepted with its request: answered now; one that closes after its response
                // never joins the epoll set.
                try
                {
                    Serve(connection, ended: false);
                    if (!connection.Registered && ReferenceEquals(_connections[fd], connection))
                    {
                        // Edge-triggered, added now: input that came since the read is reported
                        // at once, as the kernel checks the socket when it is added.
                        Register(connection);
                    }
                }
                catch (Exception ex)
                {
                    Failed(connection, ex);
                }

                return;
            }
        }

        /// <summary>
        /// As Kestrel ends a connection whose handler threw: logged, and closed if it is still
        /// this loop's (not closed or handed on before the exception).
        /// </summary>
        private void Failed(Connection connection, Exception ex)
        {
            ConnectionFailed(_owner._logger, ex);
            if (ReferenceEquals(_connections[connection.Fd], connection))
            {
                Close(connection);
            }
        }

        /// <summary>
        /// Adds a connection to the loop's epoll set, for its input. EPOLLOUT is asked for once a
        /// response does not fit (WaitToSend): asked for here, a socket with room, as a new one
        /// has, would wake the loop once for nothing. A connection that cannot be added is closed.
        /// </summary>
        private void Register(Connection connection)
        {
            if (Add(connection.Fd, Libc.EpollIn | Libc.EpollEnded | Libc.EpollEdgeTriggered))
            {
                connection.Registered = true;
            }
            else
            {
                Close(connection);
            }
        }

        /// <summary>
        /// What epoll reported for a connection: input to answer, or, while a response waits,
        /// room in the socket to send more of it.
        /// </summary>
        private void Ready(Connection connection, uint events)
        {
            var ended = (events & Libc.EpollEnded) != 0;
            if (connection.Parked is not null)
            {
                // Read once its body's pages are in (Resume).
                connection.Unread |= (events & (Libc.EpollIn | Libc.EpollEnded)) != 0;
                connection.Ended |= ended;
                return;
            }

            if (!connection.Sending)
            {
                if ((events & (Libc.EpollIn | Libc.EpollEnded)) != 0)
                {
                    Serve(connection, ended);
                }

                return;
            }

            // Requests are answered in order: input that comes meanwhile waits in the socket.
            connection.Unread |= (events & (Libc.EpollIn | Libc.EpollEnded)) != 0;
            connection.Ended |= ended;
            if ((events & (Libc.EpollOut | Libc.EpollEnded)) == 0)
            {
                return;
            }

            var progress = connection.Output!.SendWithoutWaiting(closing: connection.Closing);
            switch (connection.Next(progress))
            {
                case ConnectionStep.Send:
                    return;
                case ConnectionStep.Close:
                    if (progress == SocketOutput.Progress.Done && connection.Unread)
                    {
                        Discard(connection);
                    }

                    Close(connection);
                    return;
            }

            // ConnectionStep.Read.
            connection.Sending = false;
            connection.LastActive = _now;
            if (connection.Unread)
            {
                connection.Unread = false;
                Serve(connection, connection.Ended);
            }
        }

        /// <summary>
        /// Reads what came and answers it, until the socket is drained; or hands the connection
        /// to Kestrel. When the client has closed its side (<paramref name="ended"/>), a short
        /// read does not mean drained: the end itself is still to be read, and no later event
        /// would say so.
        /// </summary>
        private void Serve(Connection connection, bool ended, int kept = 0)
        {
            connection.LastActive = _now;
            while (true)
            {
                var got = Libc.recv(connection.Fd, _read + kept, (nuint)(ReadSize - kept), 0);
                if (got < 0)
                {
                    var error = Marshal.GetLastPInvokeError();
                    if (error == Libc.Interrupted)
                    {
                        continue;
                    }

                    if (error != Libc.TryAgain)
                    {
                        Close(connection);
                    }
                    else if (kept != 0)
                    {
                        // A head begun in a full read, and nothing more yet.
                        HandOnHead(connection, kept);
                    }

                    return;
                }

                if (got == 0)
                {
                    // The client closed its side. With a head begun, Kestrel reads it and the
                    // end, and answers as it does (400).
                    if (kept != 0)
                    {
                        HandOnHead(connection, kept);
                    }
                    else
                    {
                        Close(connection);
                    }

                    return;
                }

                var filled = kept + (int)got;
                kept = 0;
                if (connection.Fresh)
                {
                    // HTTP/2's preface, or the start of it past "PRI " (no HTTP/1.1 method the
                    // fast path answers): Kestrel's, with the scheduling HTTP/2 is faster with.
                    connection.Fresh = false;
                    if (ClientHelloListener.ReadPreface(_buffer.AsSpan(0, filled)) is ClientOffer.Http2 or ClientOffer.Incomplete && filled >= 4)
                    {
                        HandOn(connection, _buffer.AsSpan(0, filled).ToArray(), http2: true);
                        return;
                    }
                }

                if (!Answer(connection, filled, ended, out kept))
                {
                    return;
                }

                if (filled < ReadSize && !ended)
                {
                    // Drained: epoll says when more comes.
                    if (kept != 0)
                    {
                        // A head begun and not finished: Kestrel's, under its headers timeout.
                        HandOnHead(connection, kept);
                    }

                    return;
                }

                if (kept == ReadSize)
                {
                    // One head fills the whole read: Kestrel's to take or refuse.
                    HandOnHead(connection, kept);
                    return;
                }
            }
        }

        /// <summary>
        /// Answers the requests in the first <paramref name="filled"/> bytes of the read and sends
        /// the responses. True when all went, with <paramref name="kept"/> bytes of a head begun
        /// moved to the start of the read buffer; false when the connection was closed or handed
        /// on, or waits for room in the socket for the rest of a response.
        /// </summary>
        private bool Answer(Connection connection, int filled, bool ended, out int kept)
        {
            kept = 0;
            var start = 0;
            while (true)
            {
                var input = new ReadOnlySequence<byte>(_buffer, start, filled - start);
                var outcome = _owner._fastPath.Answer(ref input, connection, out var rewritten, out var rewrittenLength, out var cold);
                var at = filled - (int)input.Length;
                var progress = connection.Output!.SendWithoutWaiting(closing: outcome == Http1FastPath.Outcome.Close);
                switch (connection.Next(outcome, progress, answered: at != start, behind: at != filled))
                {
                    case ConnectionStep.Answer:
                        // More requests wait in this read: answer them, now that these have gone.
                        start = at;
                        continue;

                    case ConnectionStep.Read:
                        kept = filled - at;
                        if (kept != 0 && at != 0)
                        {
                            _buffer.AsSpan(at, kept).CopyTo(_buffer);
                        }

                        return true;

                    case ConnectionStep.Send:
                        // The common shape: one large response, nothing read behind it (or the
                        // last response). A full read, or an end not yet read, leaves input in
                        // the socket, to be read before the connection closes or reads on.
                        WaitToSend(connection, unread: filled == ReadSize || (ended && !connection.Closing), ended);
                        return false;

                    case ConnectionStep.Park:
                        Park(connection, _buffer.AsSpan(at, filled - at).ToArray(), cold!, unread: filled == ReadSize || ended, ended);
                        return false;

                    case ConnectionStep.HandOn:
                        // Kestrel's loop takes it: it sends what waits, then reads what this read
                        // holds from the first request not answered (a head the fast path would
                        // lend, or that is Kestrel's, or the rest of a pipeline), reading the head
                        // rewritten for it (KestrelFront) in place of the one read.
                        byte[] prefix;
                        if (rewritten is null)
                        {
                            prefix = _buffer.AsSpan(at, filled - at).ToArray();
                        }
                        else
                        {
                            prefix = new byte[rewritten.Length + filled - at - rewrittenLength];
                            rewritten.CopyTo(prefix, 0);
                            _buffer.AsSpan(at + rewrittenLength, filled - at - rewrittenLength).CopyTo(prefix.AsSpan(rewritten.Length));
                        }

                        HandOn(connection, prefix);
                        return false;

                    default:
                        // ConnectionStep.Close: the last response has gone (a full read may have
                        // left more in the socket, to be read before it closes), or the send failed.
                        if (connection.Closing && progress == SocketOutput.Progress.Done && filled == ReadSize)
                        {
                            Discard(connection);
                        }

                        Close(connection);
                        return false;
                }
            }
        }

        /// <summary>
        /// Holds the connection, unread, while a thread of the pool reads <paramref name="cold"/>'s
        /// pages into the page cache: sendfile would otherwise wait for the disk on this loop's
        /// thread, and handed to Kestrel, the body would go through Kestrel's pipe, a copy
        /// (docs/performance.md, "Cleartext bodies by sendfile"). The loop answers <paramref name="rest"/> once the read is done.
        /// </summary>
        private void Park(Connection connection, byte[] rest, FileBody cold, bool unread, bool ended)
        {
            connection.Parked = rest;
            connection.Unread = unread;
            connection.Ended = ended;

            // Resumed whatever came of the read: the fast path asks the page cache again.
            cold.WarmAsync().ContinueWith(
                static (_, state) =>
                {
                    var (loop, parked) = ((Loop, Connection))state!;
                    loop._warmed.Enqueue(parked);
                    loop.Wake();
                },
                (this, connection),
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }

        /// <summary>Answers what a parked connection had read, now that its body's pages are in (or handed on, should they not all be), and reads on.</summary>
        private void Resume(Connection connection)
        {
            if (connection.Parked is not { } rest || !ReferenceEquals(_connections[connection.Fd], connection))
            {
                // Closed meanwhile (the server stopping, say).
                return;
            }

            connection.Parked = null;
            connection.LastActive = _now;
            rest.CopyTo(_buffer, 0);
            var unread = connection.Unread;
            var ended = connection.Ended;
            connection.Unread = false;
            connection.Ended = false;
            connection.Warmed = true;
            if (!Answer(connection, rest.Length, ended, out var kept))
            {
                // Parked again, or waiting for room in the socket: input epoll reported while it
                // was parked is still unread, and no later edge would say so.
                if (ReferenceEquals(_connections[connection.Fd], connection))
                {
                    connection.Unread |= unread;
                }

                return;
            }

            if (unread)
            {
                // More came meanwhile, or a full read left more in the socket.
                Serve(connection, ended, kept);
            }
            else if (kept != 0)
            {
                // A head begun and not finished: Kestrel's, under its headers timeout.
                HandOnHead(connection, kept);
            }
            else if (ended)
            {
                Close(connection);
            }
        }

        /// <summary>
        /// Waits for room in the socket for the rest of a response (EPOLLOUT, in
        /// <see cref="Ready"/>), for as long as Kestrel's minimum response data rate allows.
        /// </summary>
        private void WaitToSend(Connection connection, bool unread, bool ended)
        {
            if (!connection.Writable)
            {
                // Edge-triggered, EPOLLOUT comes from now on only after a send found the socket
                // full (the kernel wakes a writer only then); asked for on a socket with room
                // already, it comes at once, and the send is tried again. A connection answered
                // as it was accepted joins the epoll set here.
                connection.Writable = true;
                if (!Control(connection.Registered ? Libc.EpollModify : Libc.EpollAdd, connection.Fd, Libc.EpollIn | Libc.EpollOut | Libc.EpollEnded | Libc.EpollEdgeTriggered))
                {
                    throw new SocketException(Marshal.GetLastPInvokeError());
                }

                connection.Registered = true;
            }

            connection.Sending = true;
            connection.Unread = unread;
            connection.Ended = ended;
            connection.SendDeadline = _owner._fastPath.SendTime(connection.Output!.UnflushedBytes) is { } time
                ? _now + (long)Math.Min(time.TotalMilliseconds, long.MaxValue / 4)
                : long.MaxValue;
        }

        /// <summary>Hands on a head begun and not finished: the first <paramref name="kept"/> bytes of the read buffer.</summary>
        private void HandOnHead(Connection connection, int kept) => HandOn(connection, _buffer.AsSpan(0, kept).ToArray());

        /// <summary>
        /// Gives the connection to Kestrel, with the <see cref="Socket"/> made for it now; one the
        /// client has already reset, so that the socket cannot be made, is closed here.
        /// </summary>
        private void HandOn(Connection connection, byte[]? prefix, bool http2 = false)
        {
            _connections.Remove(connection);
            if (connection.Registered)
            {
                Control(Libc.EpollDelete, connection.Fd, 0);
            }

            var handle = new SafeSocketHandle(connection.Fd, ownsHandle: true);
            Socket socket;
            try
            {
                socket = new Socket(handle);
            }
            catch (SocketException)
            {
                // The handle closes the descriptor, abortively, as suits a connection reset.
                connection.Output!.Complete();
                handle.Dispose();
                return;
            }

            // The output goes with the connection when some of it waits for room.
            connection.Output!.Attach(socket);
            var carried = connection.HandedOn();
            try
            {
                _owner._handOn(socket, prefix, carried ? connection : null, http2);
            }
            catch (Exception ex)
            {
                // Kestrel could not take it: the connection ends here, and the loop goes on.
                ConnectionFailed(_owner._logger, ex);
                connection.Output?.Complete();
                socket.Dispose();
            }
        }

        /// <summary>
        /// Reads and drops what the client sent after the request that closes the connection,
        /// as far as it has come (up to <see cref="MaxDiscardReads"/> reads): closed with input
        /// unread, the socket would be reset, and the response's tail still in the kernel lost
        /// with it.
        /// </summary>
        private void Discard(Connection connection)
        {
            for (var reads = 0; reads < MaxDiscardReads; reads++)
            {
                var got = Libc.recv(connection.Fd, _read, ReadSize, 0);
                if (got <= 0 && !(got < 0 && Marshal.GetLastPInvokeError() == Libc.Interrupted))
                {
                    return;
                }
            }
        }

        private void Close(Connection connection)
        {
            _connections.Remove(connection);
            connection.Output!.Complete();

            // As Kestrel's transport ends a connection: shut down, then closed, which leaves it
            // in the kernel until what was sent has gone. A failure means the client reset it.
            Libc.shutdown(connection.Fd, Libc.ShutdownBoth);
            Libc.close(connection.Fd);
        }

        /// <summary>
        /// Closes connections idle past Kestrel's keep-alive timeout (new ones that sent nothing,
        /// past its request-headers timeout) and those whose client has not taken a response by
        /// Kestrel's minimum response data rate, and accepts again after a pause.
        /// </summary>
        private void Sweep()
        {
            if (_acceptPausedUntil != 0 && _now >= _acceptPausedUntil)
            {
                _acceptPausedUntil = 0;
                Add(_owner._listen, Libc.EpollIn | Libc.EpollExclusive);
            }

            List<Connection>? ending = null;
            foreach (var connection in _connections.All)
            {
                if (connection is null)
                {
                    continue;
                }

                if (connection.Parked is not null)
                {
                    // Waiting for the disk, as Kestrel's read of the file would.
                    continue;
                }

                if (connection.Sending
                    ? _now > connection.SendDeadline
                    : _now - connection.LastActive > (connection.Fresh ? _owner._firstBytesMilliseconds : _owner._keepAliveMilliseconds))
                {
                    (ending ??= []).Add(connection);
                }
            }

            if (ending is not null)
            {
                foreach (var connection in ending)
                {
                    if (connection.Sending)
                    {
                        // As Kestrel aborts a connection whose client reads too slowly.
                        TooSlow(_owner._logger);
                    }

                    Close(connection);
                }
            }
        }
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
