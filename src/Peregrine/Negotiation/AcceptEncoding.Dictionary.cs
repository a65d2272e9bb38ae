using Microsoft.Extensions.Primitives;

namespace Peregrine.Negotiation;

internal static partial class AcceptEncoding
{
    /// <summary>
    /// True when the request names <c>dcz</c> with a non-zero weight. A client adds it only
    /// while it holds a dictionary for the URL (RFC 9842 §4), so it is not covered by <c>*</c>:
    /// a delta goes only to a client that named the coding. Parsed by the same allocation-free
    /// pass as <see cref="TrySelect(StringValues, Indexing.ContentCodingSet, out Indexing.ContentCoding)"/>.
    /// </summary>
    public static bool AcceptsDcz(StringValues acceptEncoding)
    {
        if (acceptEncoding.Count == 0)
        {
            return false;
        }

        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        for (var i = 0; i < acceptEncoding.Count; i++)
        {
            ParseLine(acceptEncoding[i].AsSpan(), weights);
        }

        return weights[DczSlot] > 0;
    }

    /// <summary>The same test on one field value given as characters (the HTTP/1.1 fast path's form).</summary>
    public static bool AcceptsDcz(ReadOnlySpan<char> acceptEncoding)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        ParseLine(acceptEncoding, weights);
        return weights[DczSlot] > 0;
    }
}
