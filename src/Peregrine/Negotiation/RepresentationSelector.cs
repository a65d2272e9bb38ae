using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;

namespace Peregrine.Negotiation;

/// <summary>
/// Which representation of an entry a request gets (RFC 9110 §12.5.3), for both senders: the
/// middleware passes the header as Kestrel parsed it, the fast path the bytes it read. When the
/// client refuses every coding made, identity included (<c>identity;q=0</c>), identity is sent
/// anyway, as §12.5.3 allows and nginx and Caddy do: a readable answer beats a 406.
/// </summary>
internal static class RepresentationSelector
{
    public static Representation Select(CatalogEntry entry, StringValues acceptEncoding)
        => acceptEncoding.Count != 0 && Encoded(entry) is { } encoded && AcceptEncoding.TrySelect(acceptEncoding, encoded.Available, out var coding)
            ? encoded.Get(coding) ?? entry.Identity
            : entry.Identity;

    /// <summary>The same choice from one field value; an empty span means no Accept-Encoding field.</summary>
    public static Representation Select(CatalogEntry entry, ReadOnlySpan<char> acceptEncoding)
        => !acceptEncoding.IsEmpty && Encoded(entry) is { } encoded && AcceptEncoding.TrySelect(acceptEncoding, encoded.Available, out var coding)
            ? encoded.Get(coding) ?? entry.Identity
            : entry.Identity;

    /// <summary>True when the entry's answer can depend on Accept-Encoding at all right now.</summary>
    public static bool HasChoice(CatalogEntry entry) => Encoded(entry) is not null;

    private static EncodedVariants? Encoded(CatalogEntry entry)
        => entry.Negotiable && entry.Encoded is { Available: not ContentCodingSet.None } encoded ? encoded : null;
}
