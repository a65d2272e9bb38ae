using System.Buffers;
using System.IO.Pipelines;

namespace Peregrine.Http1;

// Finding the request heads in what the connection has read, and deciding which to answer.
internal sealed partial class Http1FastPath
{
    internal enum Outcome : byte
    {
        NeedMore,
        HandOff,
        Close,

        /// <summary><see cref="FlushThreshold"/> bytes of responses wait: flush before answering more.</summary>
        Flush,

        /// <summary>
        /// The next request is the fast path's once its body's private copy is all in the page
        /// cache: the caller flushes what was answered, waits for the copy's pages
        /// (<see cref="FileBody.WarmAsync"/>), then calls again with <c>warmed</c> set, and the
        /// request is answered, or handed on if the pages are still not all in.
        /// </summary>
        Warm,

        /// <summary>
        /// The next request is Kestrel's to answer, and the connection the fast path's after it:
        /// a head Kestrel frames as the fast path does, asking for no body, no upgrade and no
        /// close (<see cref="RequestHead.IsLendable"/>). The buffer is left at its start, and
        /// its length is given (<c>rewrittenLength</c>, with nothing rewritten); the caller lends
        /// it to Kestrel (<see cref="KestrelLease"/>) and reads on once Kestrel has answered.
        /// </summary>
        Lend,
    }

    /// <summary>
    /// Answers every complete request in <paramref name="buffer"/> (pipelining), leaving it at
    /// the first one not answered. While <paramref name="first"/> (no request on the connection
    /// answered yet), a head not answered goes past <see cref="KestrelFront"/> first: on a
    /// hand-off <paramref name="rewritten"/> may then hold the head Kestrel is to read instead of
    /// the first <paramref name="rewrittenLength"/> bytes. <see cref="Outcome.Warm"/> leaves in
    /// <paramref name="cold"/> the copy to wait for; <paramref name="warmed"/> says the first
    /// request was waited for once already, and is then answered or handed on.
    /// <see cref="Outcome.Lend"/> leaves the lent head's length in <paramref name="rewrittenLength"/>.
    /// </summary>
    private Outcome Process(ref ReadOnlySequence<byte> buffer, PipeWriter output, bool https, ref bool first, bool warmed, out byte[]? rewritten, out int rewrittenLength, out FileBody? cold)
    {
        rewritten = null;
        rewrittenLength = 0;
        cold = null;
        var mayWarm = !warmed;
        var limits = _headLimits;
        long written = 0;
        while (!buffer.IsEmpty)
        {
            byte[]? rented = null;
            var head = buffer.FirstSpan;
            var framing = RequestHead.Find(head, limits, out var length, out var request, first);
            if (framing == HeadFraming.Incomplete && !buffer.IsSingleSegment)
            {
                // The head straddles the pipe's segments: copy it out once, up to its blank line
                // or as far as the limits let a head run, and frame the copy.
                var bounded = buffer.Slice(0, Math.Min(buffer.Length, limits.Head));
                var reader = new SequenceReader<byte>(bounded);
                var copied = (int)(reader.TryReadTo(out ReadOnlySequence<byte> lines, "\r\n\r\n"u8) ? lines.Length + 4 : bounded.Length);
                rented = ArrayPool<byte>.Shared.Rent(copied);
                bounded.Slice(0, copied).CopyTo(rented);
                head = rented.AsSpan(0, copied);
                framing = RequestHead.Find(head, limits, out length, out request, first);
            }

            try
            {
                if (framing != HeadFraming.Complete)
                {
                    return framing == HeadFraming.Incomplete ? Outcome.NeedMore : Outcome.HandOff;
                }

                if (!_serves || !request.IsAnswerable || !TryRespond(request, output, https, mayWarm, out var close, out var bytes, out cold))
                {
                    if (cold is not null)
                    {
                        return Outcome.Warm;
                    }

                    switch (first ? KestrelFront.Decide(head[..length], out rewritten) : FrontAction.None)
                    {
                        case FrontAction.RefuseConnect:
                            WriteRefusal(output, KestrelFront.ConnectRefusal);
                            buffer = buffer.Slice(length);
                            return Outcome.Close;
                        case FrontAction.Rewrite:
                            rewrittenLength = length;
                            return Outcome.HandOff;
                        default:
                            // Lent only where Kestrel would read a next head: HTTP/1.1 unless it
                            // says close, HTTP/1.0 only when it says keep-alive (RFC 9112 §9.3).
                            if (_serves && request.IsLendable && !request.Close && (!request.Http10 || request.KeepAlive))
                            {
                                rewrittenLength = length;
                                return Outcome.Lend;
                            }

                            return Outcome.HandOff;
                    }
                }

                first = false;
                mayWarm = true;

                buffer = buffer.Slice(length);
                if (close)
                {
                    return Outcome.Close;
                }

                written += bytes;
                if (written >= FlushThreshold && !buffer.IsEmpty)
                {
                    return Outcome.Flush;
                }
            }
            finally
            {
                if (rented is not null)
                {
                    ArrayPool<byte>.Shared.Return(rented);
                }
            }
        }

        return Outcome.NeedMore;
    }
}
