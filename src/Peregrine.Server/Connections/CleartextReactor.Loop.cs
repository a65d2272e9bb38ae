using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Server.Connections;

// A loop: its thread, its epoll set, accepting, and the end of its connections (closed, or
// timed out by the sweep). What it does with a connection's bytes is CleartextReactor.Serving.
internal sealed unsafe partial class CleartextReactor
{
    private sealed partial class Loop
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
}
