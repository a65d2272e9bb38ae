using System.Buffers;

namespace Peregrine.Http1;

/// <summary>What a connection's shell is to do next, as <see cref="ConnectionState.Next(Http1FastPath.Outcome, SocketOutput.Progress, bool, bool)"/> decides it.</summary>
internal enum ConnectionStep : byte
{
    /// <summary>More requests wait in what was read, and what was answered has gone: answer them.</summary>
    Answer,

    /// <summary>Everything answered has gone: wait until the connection is readable, and answer what comes (a head begun stays kept).</summary>
    Read,

    /// <summary>
    /// Output waits for room in the socket: wait until it is writable, send the rest, and ask
    /// again (<see cref="ConnectionState.Next(SocketOutput.Progress)"/>), under Kestrel's minimum
    /// response data rate. Nothing more is read meanwhile.
    /// </summary>
    Send,

    /// <summary>
    /// The next request's body must be read into the page cache first (<see cref="FileBody.WarmAsync"/>):
    /// park the connection until it is, then answer again with <see cref="ConnectionState.Warmed"/> set.
    /// </summary>
    Park,

    /// <summary>Kestrel answers the next request (<see cref="KestrelLease"/>), and the connection is read on here after it.</summary>
    Lend,

    /// <summary>Kestrel takes the rest of the connection, from the next unanswered byte (a head rewritten for it first, when there is one).</summary>
    HandOn,

    /// <summary>The connection ends: its last response has gone (Connection: close), or the client stopped taking its output.</summary>
    Close,
}

/// <summary>
/// One HTTP/1.1 connection's protocol state below Kestrel, and the one place that decides its next
/// step, as h11's <c>Connection</c> and hyper's <c>proto::h1::Conn</c> do: it holds no socket and
/// does no I/O. The loops that read and write a connection (the standalone server's epoll reactor,
/// and <see cref="Http1FastPath"/>'s loop on Kestrel's transport) are shells: they answer what
/// they read (<see cref="Http1FastPath"/>'s <c>Process</c>, which says what it left in an
/// <see cref="Http1FastPath.Outcome"/>), try to send, and carry out the <see cref="ConnectionStep"/>
/// this returns for that outcome and how far the send got. When the reactor hands a connection to
/// Kestrel, this object goes with it (a connection feature), and Kestrel's loop goes on from
/// where the reactor stopped (docs/architecture.md, "The connection layer").
/// </summary>
/// <remarks>
/// Not sealed: the reactor's connection derives from it, adding its descriptor and epoll flags,
/// so that a connection costs the reactor no second object. No method is virtual.
/// </remarks>
internal class ConnectionState
{
    /// <summary>
    /// Requests lent to Kestrel one after another, none answered here between them, after which
    /// the next goes to Kestrel with the rest of the connection. Lending costs a request more CPU
    /// than Kestrel alone (the fast path reads its head too: docs/performance.md, "Requests lent to
    /// Kestrel"); a connection of nothing else, such as an application's API calls, pays it this
    /// many times at most.
    /// </summary>
    internal const int MaxLentInARow = 32;

    /// <summary>What the connection does once its waiting output has gone: Close, HandOff, or NeedMore (read on).</summary>
    private Http1FastPath.Outcome _then = Http1FastPath.Outcome.NeedMore;

    /// <param name="output">The output a shell on a socket writes into, when the fast path sends itself; null over TLS or Kestrel's pipe.</param>
    /// <param name="inReactor">
    /// Held by the reactor, which cannot lend a request (that takes Kestrel's connection) and
    /// waits for room in the socket only when nothing it read waits behind the response (its
    /// read buffer is the loop's, not the connection's).
    /// </param>
    public ConnectionState(SocketOutput? output, bool inReactor)
    {
        Output = output;
        InReactor = inReactor;
    }

    /// <summary>No request answered yet: a head not answered goes past <see cref="KestrelFront"/> first.</summary>
    public bool First = true;

    /// <summary>The request at the start of the next answer was waited for (<see cref="ConnectionStep.Park"/>) once already.</summary>
    public bool Warmed;

    /// <summary>Requests lent to Kestrel since the fast path last answered one.</summary>
    public int LentInARow;

    /// <summary>Kestrel's connection for the requests lent to it, from the first; null before.</summary>
    public KestrelLease? Lease;

    /// <summary>
    /// A head begun in an earlier read and not finished, copied out of Kestrel's pipe so as not to
    /// hold its block while the client waits (docs/performance.md, "Memory per idle
    /// connection"): its first <see cref="Stashed"/> bytes; null otherwise.
    /// </summary>
    public byte[]? Stash;

    public int Stashed;

    /// <summary>The output the fast path writes into on a socket of its own; what it holds is the connection's pending output.</summary>
    public SocketOutput? Output { get; private set; }

    /// <summary>See the constructor's <c>inReactor</c>; false once the reactor has handed the connection on.</summary>
    public bool InReactor { get; private set; }

    /// <summary>The connection closes once its waiting output has gone: its last response said close, or the server is stopping.</summary>
    public bool Closing => _then == Http1FastPath.Outcome.Close;

    /// <summary>
    /// The step after an answer: <paramref name="outcome"/> is what the fast path left,
    /// <paramref name="progress"/> how far the send of what it answered got, <paramref name="answered"/>
    /// whether it answered any request, and <paramref name="behind"/> whether bytes read and not
    /// answered wait behind it.
    /// </summary>
    public ConnectionStep Next(Http1FastPath.Outcome outcome, SocketOutput.Progress progress, bool answered, bool behind)
    {
        if (answered)
        {
            LentInARow = 0;
        }

        if (outcome == Http1FastPath.Outcome.Lend && LentInARow == MaxLentInARow)
        {
            outcome = Http1FastPath.Outcome.HandOff;
        }

        switch (progress)
        {
            case SocketOutput.Progress.Failed:
                return ConnectionStep.Close;

            case SocketOutput.Progress.Full:
                // Kestrel's loop waits for room however much was read. The reactor waits only for
                // the last response, or for one with nothing read behind it; the rarer shapes,
                // answers still waiting with more read behind them, go to Kestrel's loop, which
                // sends and then reads the rest again.
                if (outcome is Http1FastPath.Outcome.Close or Http1FastPath.Outcome.HandOff)
                {
                    _then = outcome;
                }
                else
                {
                    _then = Http1FastPath.Outcome.NeedMore;
                }

                if (!InReactor || outcome == Http1FastPath.Outcome.Close || (outcome == Http1FastPath.Outcome.NeedMore && !behind))
                {
                    return ConnectionStep.Send;
                }

                return HandOn(outcome);
        }

        switch (outcome)
        {
            case Http1FastPath.Outcome.Close:
                _then = outcome;
                return ConnectionStep.Close;
            case Http1FastPath.Outcome.HandOff:
                return HandOn(outcome);
            case Http1FastPath.Outcome.Lend when !InReactor:
                // Kestrel answers this one; the connection is read on from the end of its head.
                First = false;
                LentInARow++;
                return ConnectionStep.Lend;
            case Http1FastPath.Outcome.Lend:
                // The reactor cannot lend: Kestrel's loop reads the head again, and lends it.
                return HandOn(outcome);
            case Http1FastPath.Outcome.Warm:
                return ConnectionStep.Park;
            case Http1FastPath.Outcome.Flush:
                return ConnectionStep.Answer;
            default:
                return ConnectionStep.Read;
        }
    }

    /// <summary>The step after the rest of a waiting output was sent (or not, by <paramref name="progress"/>).</summary>
    public ConnectionStep Next(SocketOutput.Progress progress) => progress switch
    {
        SocketOutput.Progress.Failed => ConnectionStep.Close,
        SocketOutput.Progress.Full => ConnectionStep.Send,
        _ => _then switch
        {
            Http1FastPath.Outcome.Close => ConnectionStep.Close,
            Http1FastPath.Outcome.HandOff => ConnectionStep.HandOn,
            _ => ConnectionStep.Read,
        },
    };

    private ConnectionStep HandOn(Http1FastPath.Outcome outcome)
    {
        // Kestrel's loop, once the output has gone: a head handed off is Kestrel's; anything else
        // read is read there again.
        _then = outcome == Http1FastPath.Outcome.HandOff ? outcome : Http1FastPath.Outcome.NeedMore;
        return ConnectionStep.HandOn;
    }

    /// <summary>The server stops while output waits: Kestrel's loop sends it, then closes, as Kestrel ends its own connections.</summary>
    public void Stop() => _then = Http1FastPath.Outcome.Close;

    /// <summary>
    /// The reactor hands the connection to Kestrel's loop. The output goes with it when some of it
    /// waits, and is returned otherwise. True when Kestrel's loop must take up this state (output
    /// waits, the connection closes or is Kestrel's after it, or a request was answered); false
    /// for a connection that is as new to Kestrel as if the reactor had never read it.
    /// </summary>
    public bool HandedOn()
    {
        InReactor = false;
        if (Output is { UnflushedBytes: 0 } output)
        {
            output.Complete();
            Output = null;
        }

        return Output is not null || _then != Http1FastPath.Outcome.NeedMore || !First;
    }

    /// <summary>Copies <paramref name="head"/>, a head begun and alone in the buffer, out of the pipe.</summary>
    public void Keep(in ReadOnlySequence<byte> head)
    {
        Stash = head.ToArray();
        Stashed = Stash.Length;
    }

    /// <summary>
    /// The kept head joined to <paramref name="buffer"/>'s first <paramref name="take"/> bytes,
    /// for framing. The copy grows by doubling, so a head sent a byte at a time is copied O(n) times.
    /// </summary>
    public ReadOnlySequence<byte> Join(in ReadOnlySequence<byte> buffer, int take)
    {
        var stash = Stash!;
        if (Stashed + take > stash.Length)
        {
            Array.Resize(ref stash, Math.Max(Stashed + take, stash.Length * 2));
            Stash = stash;
        }

        buffer.Slice(0, take).CopyTo(stash.AsSpan(Stashed));
        return new ReadOnlySequence<byte>(stash, 0, Stashed + take);
    }

    /// <summary>The kept head was answered or lent: nothing is kept now.</summary>
    public void Unkeep()
    {
        Stash = null;
        Stashed = 0;
    }
}
