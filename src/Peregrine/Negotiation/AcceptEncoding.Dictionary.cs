using Microsoft.Extensions.Primitives;

namespace Peregrine.Negotiation;

internal static partial class AcceptEncoding
{
    /// <summary>
    /// The dictionary codings the request names with a non-zero weight, dcz and dcb. A client
    /// adds them only while it holds a dictionary for the URL (RFC 9842 §4), so they are not
    /// covered by <c>*</c>: a delta goes only to a client that named its coding. Parsed by the
    /// same allocation-free pass as <see cref="TrySelect(StringValues, Indexing.ContentCodingSet, out Indexing.ContentCoding)"/>.
    /// </summary>
    public static DictionaryCodings AcceptedDictionaryCodings(StringValues acceptEncoding)
    {
        if (acceptEncoding.Count == 0)
        {
            return DictionaryCodings.None;
        }

        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        for (var i = 0; i < acceptEncoding.Count; i++)
        {
            ParseLine(acceptEncoding[i].AsSpan(), weights);
        }

        return Named(weights);
    }

    /// <summary>The same on one field value given as characters (the HTTP/1.1 fast path's form).</summary>
    public static DictionaryCodings AcceptedDictionaryCodings(ReadOnlySpan<char> acceptEncoding)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        ParseLine(acceptEncoding, weights);
        return Named(weights);
    }

    private static DictionaryCodings Named(Span<int> weights)
        => (weights[DczSlot] > 0 ? DictionaryCodings.Dcz : DictionaryCodings.None) | (weights[DcbSlot] > 0 ? DictionaryCodings.Dcb : DictionaryCodings.None);
}

/// <summary>The dictionary codings of RFC 9842 a request accepts.</summary>
[Flags]
internal enum DictionaryCodings : byte
{
    None = 0,
    Dcz = 1,
    Dcb = 2,
}
