using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;
using Peregrine.Diagnostics;
using Peregrine.Preconditions;
using Peregrine.Select;

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
        long written = 0;
        while (!buffer.IsEmpty)
        {
            ReadOnlySpan<byte> head;
            byte[]? rented = null;
            var first = buffer.FirstSpan;
            var end = first.IndexOf("\r\n\r\n"u8);
            if (end >= 0)
            {
                head = first[..(end + 4)];
            }
            else if (buffer.IsSingleSegment)
            {
                return Outcome.NeedMore;
            }
            else
            {
                // The head straddles two of the pipe's segments: copy it out once.
                var reader = new SequenceReader<byte>(buffer);
                if (!reader.TryReadTo(out ReadOnlySequence<byte> sequence, "\r\n\r\n"u8))
                {
                    return Outcome.NeedMore;
                }

                var length = (int)sequence.Length + 4;
                if (length > MaxHeadBytes)
                {
                    return Outcome.HandOff;
                }

                rented = ArrayPool<byte>.Shared.Rent(length);
                buffer.Slice(0, length).CopyTo(rented);
                head = rented.AsSpan(0, length);
            }

            try
            {
                if (!TryRespond(head, output, out var close, out var bytes))
                {
                    return Outcome.HandOff;
                }

                buffer = buffer.Slice(head.Length);
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
