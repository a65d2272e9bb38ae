using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;

namespace Peregrine.Negotiation;

/// <summary>
/// The choice among the encoded representations a static web assets manifest states, made as
/// <c>MapStaticAssets</c> makes it (ASP.NET Core's <c>ContentEncodingNegotiationMatcherPolicy</c>),
/// so that a route answers with the representation the stock app would send:
/// </summary>
/// <remarks>
/// <list type="bullet">
/// <item>The client's weight decides first. A coding listed more than once counts at its highest
/// weight; one listed with <c>q=0</c> only is not chosen.</item>
/// <item>Between codings the client weighs alike, the one the manifest prefers wins (its selector's
/// <c>Quality</c>, which the SDK makes larger for a smaller file); identity's preference is 0, so
/// it loses every such tie.</item>
/// <item>Only the tokens <c>br</c>, <c>gzip</c> and <c>identity</c> (and any other the manifest
/// states) are matched: <c>*</c> and <c>x-gzip</c> choose nothing.</item>
/// <item>When nothing is chosen, identity is sent, whatever the client said of it.</item>
/// </list>
/// Malformed elements are ignored one by one, as in the rest of this parser (and as
/// <c>StringWithQualityHeaderValue.TryParseList</c> skips them).
/// </remarks>
internal static partial class AcceptEncoding
{
    /// <summary>
    /// Chooses among <paramref name="available"/> (the manifest's representations) and identity
    /// by the rules above. Always returns a coding; <see cref="ContentCoding.Identity"/> when the
    /// client accepts none of the encodings.
    /// </summary>
    public static ContentCoding SelectStated(StringValues acceptEncoding, ContentCodingSet available, EncodingPreference preference)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        for (var i = 0; i < acceptEncoding.Count; i++)
        {
            ParseLine(acceptEncoding[i].AsSpan(), weights, asStated: true);
        }

        return ChooseStated(weights, available, preference);
    }

    /// <summary>The same choice for one field value given as characters (the HTTP/1.1 fast path's form).</summary>
    public static ContentCoding SelectStated(ReadOnlySpan<char> acceptEncoding, ContentCodingSet available, EncodingPreference preference)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        ParseLine(acceptEncoding, weights, asStated: true);
        return ChooseStated(weights, available, preference);
    }

    private static ContentCoding ChooseStated(ReadOnlySpan<int> weights, ContentCodingSet available, EncodingPreference preference)
    {
        var coding = ContentCoding.Identity;
        var best = 0;
        var bestPreference = double.NegativeInfinity;
        ConsiderStated(weights[IdentitySlot], 0, ContentCoding.Identity, ref best, ref bestPreference, ref coding);
        if ((available & ContentCodingSet.Brotli) != 0)
        {
            ConsiderStated(weights[BrotliSlot], preference.Brotli, ContentCoding.Brotli, ref best, ref bestPreference, ref coding);
        }

        if ((available & ContentCodingSet.Zstd) != 0)
        {
            ConsiderStated(weights[ZstdSlot], preference.Zstd, ContentCoding.Zstd, ref best, ref bestPreference, ref coding);
        }

        if ((available & ContentCodingSet.Gzip) != 0)
        {
            ConsiderStated(weights[GzipSlot], preference.Gzip, ContentCoding.Gzip, ref best, ref bestPreference, ref coding);
        }

        return coding;
    }

    private static void ConsiderStated(int weight, double preference, ContentCoding candidate, ref int best, ref double bestPreference, ref ContentCoding coding)
    {
        // NotListed is negative and q=0 is 0: neither is ever above best, which starts at 0.
        if (weight > best || (weight == best && weight > 0 && preference > bestPreference))
        {
            best = weight;
            bestPreference = preference;
            coding = candidate;
        }
    }

    /// <summary>The slot of a token MapStaticAssets matches: the exact names only (no <c>x-gzip</c>, no <c>*</c>).</summary>
    private static int StatedSlotFor(ReadOnlySpan<char> name)
    {
        if (name.Equals("br", StringComparison.OrdinalIgnoreCase))
        {
            return BrotliSlot;
        }

        if (name.Equals("gzip", StringComparison.OrdinalIgnoreCase))
        {
            return GzipSlot;
        }

        if (name.Equals("zstd", StringComparison.OrdinalIgnoreCase))
        {
            return ZstdSlot;
        }

        return name.Equals("identity", StringComparison.OrdinalIgnoreCase) ? IdentitySlot : -1;
    }
}
