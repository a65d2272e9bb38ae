using System.Buffers;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using Peregrine.Http1;
using Peregrine.Interop;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Connections;

// A connection's bytes on a loop: read, answered by the fast path, and the step its
// ConnectionState decides carried out (send, wait to send, park, hand on to Kestrel, close).
internal sealed unsafe partial class CleartextReactor
{
    private sealed partial class Loop
    {
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
    }
}
