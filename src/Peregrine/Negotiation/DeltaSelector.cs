using Microsoft.AspNetCore.Http;
using Peregrine.Fields;
using Peregrine.Indexing;

namespace Peregrine.Negotiation;

/// <summary>
/// Whether a request gets a delta against the dictionary it holds (RFC 9842 §4.2, <c>dcz</c>)
/// instead of the ordinary representation chosen by <see cref="RepresentationSelector"/>. Each
/// test is cheap and the first that fails ends the choice, most requests at the first:
/// <list type="number">
/// <item>the entry has deltas (a fingerprinted asset with earlier versions kept);</item>
/// <item>no Range: a range of a delta would be a range of bytes that depend on the client's
/// dictionary, and a client resuming a download may no longer hold it. RFC 9110 §14.2 lets a
/// server ignore Range, but the simpler correct answer is to range over the ordinary
/// representation, whose bytes every client can use; Accept-Ranges keeps its meaning;</item>
/// <item>Accept-Encoding names <c>dcz</c> or <c>dcb</c> (<see cref="AcceptEncoding.AcceptedDictionaryCodings(Microsoft.Extensions.Primitives.StringValues)"/>);</item>
/// <item><c>Available-Dictionary</c> holds one SHA-256, and the entry has a delta against
/// the version of that hash in a coding it accepts, the smaller if both: one probe of the
/// entry's table (<see cref="DictionaryDeltas.Find"/>).
/// Deltas are made only against kept versions of the same asset, whose pattern covers this URL
/// (<see cref="DictionaryMatch"/>), so a hash found is a dictionary the client may use here;</item>
/// <item>the delta is smaller than the ordinary representation;</item>
/// <item>the Sec-Fetch gate (<see cref="DictionaryGate"/>).</item>
/// </list>
/// HEAD selects as GET does, so that its fields are GET's (RFC 9110 §9.3.2).
/// </summary>
internal static class DeltaSelector
{
    public static Representation? Select(HttpRequest request, CatalogEntry entry, Representation ordinary, ConfiguredHeaders configured)
    {
        if (entry.Deltas is not { } deltas)
        {
            return null;
        }

        var headers = request.Headers;
        if (headers.Range.Count != 0 || AcceptEncoding.AcceptedDictionaryCodings(headers.AcceptEncoding) is not (not DictionaryCodings.None and var codings))
        {
            return null;
        }

        Span<byte> hash = stackalloc byte[32];
        if (!AvailableDictionary.TryRead(headers["Available-Dictionary"], hash)
            || deltas.Find(hash, dcz: (codings & DictionaryCodings.Dcz) != 0, dcb: (codings & DictionaryCodings.Dcb) != 0) is not { } delta
            || delta.Length >= ordinary.Length
            || !DictionaryGate.Allows(request, configured))
        {
            return null;
        }

        return delta;
    }

    /// <summary>
    /// For the HTTP/1.1 fast path: true when the request might be answered with a delta, which
    /// the fast path leaves to the middleware rather than read Available-Dictionary and the
    /// Fetch metadata itself. A client names dcz or dcb only while it holds a dictionary for the
    /// URL, so the requests handed on are those that may well get one.
    /// </summary>
    public static bool MayApply(CatalogEntry entry, ReadOnlySpan<char> acceptEncoding)
        => entry.Deltas is not null && AcceptEncoding.AcceptedDictionaryCodings(acceptEncoding) != DictionaryCodings.None;
}
