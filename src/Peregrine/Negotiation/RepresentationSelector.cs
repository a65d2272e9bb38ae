using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;

namespace Peregrine.Negotiation;

/// <summary>
/// Which representation of an entry a request gets (RFC 9110 §12.5.3), for both senders: the
/// middleware passes the header as Kestrel parsed it, the fast path the bytes it read. Variants
/// a static web assets manifest states are chosen among as MapStaticAssets chooses
/// (<see cref="AcceptEncoding.SelectStated(StringValues, ContentCodingSet, EncodingPreference)"/>). When the
/// client refuses every coding made, identity included (<c>identity;q=0</c>), identity is sent
/// anyway, as §12.5.3 allows and nginx and Caddy do: a readable answer beats a 406.
/// </summary>
internal static class RepresentationSelector
{
    public static Representation Select(CatalogEntry entry, StringValues acceptEncoding)
    {
        if (acceptEncoding.Count == 0)
        {
            return entry.Identity;
        }

        if (Encoded(entry) is { } encoded)
        {
            if (encoded.Stated is { } preference)
            {
                return encoded.Get(AcceptEncoding.SelectStated(acceptEncoding, encoded.Available, preference)) ?? entry.Identity;
            }

            return AcceptEncoding.TrySelect(acceptEncoding, encoded.Available, out var coding) ? encoded.Get(coding) ?? entry.Identity : entry.Identity;
        }

        ReportDemand(entry);
        return entry.Identity;
    }

    /// <summary>The same choice from one field value; an empty span means no Accept-Encoding field.</summary>
    public static Representation Select(CatalogEntry entry, ReadOnlySpan<char> acceptEncoding)
    {
        if (acceptEncoding.IsEmpty || Encoded(entry) is not { } encoded)
        {
            return entry.Identity;
        }

        if (encoded.Stated is { } preference)
        {
            return encoded.Get(AcceptEncoding.SelectStated(acceptEncoding, encoded.Available, preference)) ?? entry.Identity;
        }

        return AcceptEncoding.TrySelect(acceptEncoding, encoded.Available, out var coding) ? encoded.Get(coding) ?? entry.Identity : entry.Identity;
    }

    /// <summary>
    /// True when the entry's answer can depend on Accept-Encoding at all right now; called
    /// when the request has an Accept-Encoding field, so a false answer reports the demand.
    /// </summary>
    public static bool HasChoice(CatalogEntry entry)
    {
        if (Encoded(entry) is not null || entry.Deltas is not null)
        {
            return true;
        }

        ReportDemand(entry);
        return false;
    }

    /// <summary>
    /// A client that sent Accept-Encoding asked for a file whose variants are not made yet:
    /// the compressor is told, so it makes these next. Any Accept-Encoding field counts (one
    /// that refuses every coding is rare, and costs only an earlier place in the queue).
    /// </summary>
    private static void ReportDemand(CatalogEntry entry)
    {
        if (entry.Negotiable && entry.Encoded is null)
        {
            entry.ReportDemand();
        }
    }

    private static EncodedVariants? Encoded(CatalogEntry entry)
        => entry.Negotiable && entry.Encoded is { Available: not ContentCodingSet.None } encoded ? encoded : null;
}
