using System.Buffers;
using System.IO.Pipelines;

namespace Peregrine.FastPath;

// Finding the request heads in what the connection has read, and deciding which to answer.
internal sealed partial class Http1FastPath
{
    private enum Outcome : byte
    {
        NeedMore,
        HandOff,
        Close,

        /// <summary><see cref="FlushThreshold"/> bytes of responses wait: flush before answering more.</summary>
        Flush,
    }

    /// <summary>Answers every complete request in <paramref name="buffer"/> (pipelining), leaving it at the first one not answered.</summary>
    private Outcome Process(ref ReadOnlySequence<byte> buffer, PipeWriter output)
    {
        var limits = _headLimits;
        long written = 0;
        while (!buffer.IsEmpty)
        {
            byte[]? rented = null;
            var head = buffer.FirstSpan;
            var framing = RequestHead.Find(head, limits, out var length);
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
                framing = RequestHead.Find(head, limits, out length);
            }

            try
            {
                if (framing != HeadFraming.Complete)
                {
                    return framing == HeadFraming.Incomplete ? Outcome.NeedMore : Outcome.HandOff;
                }

                if (!TryRespond(head[..length], output, out var close, out var bytes))
                {
                    return Outcome.HandOff;
                }

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
