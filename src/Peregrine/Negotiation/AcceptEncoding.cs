using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;

namespace Peregrine.Negotiation;

/// <summary>
/// Proactive negotiation of the content coding from Accept-Encoding (RFC 9110 §12.5.3).
/// </summary>
/// <remarks>
/// <para>Policy where the RFC leaves room, each choice made once here:</para>
/// <list type="bullet">
/// <item>No Accept-Encoding at all: identity. §12.5.3 says any coding is then acceptable, but a
/// client that sent nothing may not decode anything, so the unencoded bytes are the safe answer.</item>
/// <item>A malformed element (bad token, stray <c>=</c>, <c>q</c> without a value, an invalid
/// qvalue such as <c>q=2</c>, <c>q=-1</c> or <c>q=0.1234</c>, a second <c>q</c>, an unterminated
/// quoted-string) is ignored on its own; the rest of the field still counts. Guessing at what a
/// malformed weight meant could turn "do not send me this" into "send me this".</item>
/// <item>A coding listed twice is weighed by its first valid occurrence; <c>x-gzip</c> and
/// <c>gzip</c> are one coding (§8.4.1.3), so whichever comes first counts.</item>
/// <item>Identity that is not named (and not covered by <c>*</c>) is acceptable (§12.5.3) but ranks
/// below every coding the client named with a non-zero weight: a client that lists only
/// <c>gzip;q=0.5</c> still gets gzip.</item>
/// <item>Equal weights are broken by the server's preference br &gt; zstd &gt; gzip &gt; identity,
/// smallest body first (§12.5.3 leaves the order among equals to the server).</item>
/// </list>
/// </remarks>
internal static partial class AcceptEncoding
{
    // A qvalue is held in thousandths: §12.4.2 allows at most three decimals, so every valid weight
    // is an integer in 0..1000 and comparisons are exact.
    private const int NotListed = -1;
    private const int MaxWeight = 1000;

    // The weight given to identity when the client neither named it nor sent "*": the smallest
    // non-zero weight, so identity stays acceptable but loses to any named coding, and the tie-break
    // below puts identity after a coding named with q=0.001 too.
    private const int UnnamedIdentityWeight = 1;

    // Where each weight is kept while the field is read: one int per coding the server can produce,
    // plus "*", on the stack.
    private const int BrotliSlot = 0;
    private const int ZstdSlot = 1;
    private const int GzipSlot = 2;
    private const int IdentitySlot = 3;
    private const int AnySlot = 4;

    // dcz and dcb (RFC 9842 §4) are weighed here but chosen by DeltaSelector, never by Choose.
    private const int DczSlot = 5;
    private const int DcbSlot = 6;
    private const int SlotCount = 7;

    /// <summary>
    /// Chooses the representation to send for a request carrying <paramref name="acceptEncoding"/>.
    /// </summary>
    /// <param name="acceptEncoding">Every Accept-Encoding field line of the request; several lines
    /// are one comma-separated list (RFC 9110 §5.3).</param>
    /// <param name="available">The encoded variants that exist for the resource.</param>
    /// <param name="coding">The chosen representation; <see cref="ContentCoding.Identity"/> when the
    /// method returns false.</param>
    /// <returns>False when nothing available is acceptable: identity is refused and no available
    /// coding has a non-zero weight. The caller then decides between 406 and sending identity anyway
    /// (§12.5.3 allows both).</returns>
    public static bool TrySelect(StringValues acceptEncoding, ContentCodingSet available, out ContentCoding coding)
    {
        if (acceptEncoding.Count == 0)
        {
            coding = ContentCoding.Identity;
            return true;
        }

        // An empty field value, or one whose every element is ignored, leaves everything NotListed,
        // which is exactly §12.5.3's "does not want any content coding": identity only.
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        for (var i = 0; i < acceptEncoding.Count; i++)
        {
            ParseLine(acceptEncoding[i].AsSpan(), weights);
        }

        return Choose(weights, available, out coding);
    }

    /// <summary>The same choice for one field value given as characters (the HTTP/1.1 fast path's form).</summary>
    public static bool TrySelect(ReadOnlySpan<char> acceptEncoding, ContentCodingSet available, out ContentCoding coding)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        ParseLine(acceptEncoding, weights);
        return Choose(weights, available, out coding);
    }

    private static bool Choose(ReadOnlySpan<int> weights, ContentCodingSet available, out ContentCoding coding)
    {
        // §12.5.3: "*" matches any coding not explicitly listed; a coding neither listed nor covered
        // by "*" is not acceptable. Codings are visited in server preference order and replaced only
        // by a strictly higher weight, so ties go to the earlier, smaller coding.
        var any = weights[AnySlot];
        var best = 0;
        coding = ContentCoding.Identity;
        Consider(available, ContentCodingSet.Brotli, ContentCoding.Brotli, weights[BrotliSlot], any, ref best, ref coding);
        Consider(available, ContentCodingSet.Zstd, ContentCoding.Zstd, weights[ZstdSlot], any, ref best, ref coding);
        Consider(available, ContentCodingSet.Gzip, ContentCoding.Gzip, weights[GzipSlot], any, ref best, ref coding);

        // §12.5.3: identity is acceptable unless excluded by "identity;q=0", or by "*;q=0" without a
        // more specific entry for identity.
        var identity = weights[IdentitySlot] != NotListed ? weights[IdentitySlot]
            : any != NotListed ? any
            : UnnamedIdentityWeight;
        if (identity > best)
        {
            best = identity;
            coding = ContentCoding.Identity;
        }

        return best > 0;
    }

    private static void Consider(
        ContentCodingSet available, ContentCodingSet variant, ContentCoding candidate, int listed, int any, ref int best, ref ContentCoding coding)
    {
        if ((available & variant) == 0)
        {
            return;
        }

        var weight = listed != NotListed ? listed : any != NotListed ? any : 0;
        if (weight > best)
        {
            best = weight;
            coding = candidate;
        }
    }
}
