
namespace Peregrine.Indexing;

/// <summary>
/// The encoded representations of one file (RFC 9110 §8.4), made once and published on the
/// entry with a single reference write; a request reads them once and sees one consistent set.
/// </summary>
internal sealed class EncodedVariants
{
    public EncodedVariants(Representation? brotli, Representation? zstd, Representation? gzip, EncodingPreference? stated = null)
    {
        Brotli = brotli;
        Zstd = zstd;
        Gzip = gzip;
        Stated = stated;
        Available = (brotli is null ? ContentCodingSet.None : ContentCodingSet.Brotli)
            | (zstd is null ? ContentCodingSet.None : ContentCodingSet.Zstd)
            | (gzip is null ? ContentCodingSet.None : ContentCodingSet.Gzip);
    }

    public static EncodedVariants None { get; } = new(null, null, null);

    public ContentCodingSet Available { get; }

    /// <summary>
    /// For the encoded files a static web assets manifest states (served as it states them),
    /// its preference among them, which negotiation then follows as MapStaticAssets does;
    /// <see langword="null"/> for Peregrine's own variants.
    /// </summary>
    public EncodingPreference? Stated { get; }

    public Representation? Brotli { get; }

    public Representation? Zstd { get; }

    public Representation? Gzip { get; }

    public Representation? Get(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => Brotli,
        ContentCoding.Zstd => Zstd,
        ContentCoding.Gzip => Gzip,
        _ => null,
    };
}

/// <summary>
/// A static web assets manifest's preference among a route's encodings (its selectors'
/// <c>Quality</c>): it breaks a tie between codings the client weighs alike. Identity's is 0.
/// </summary>
internal sealed record EncodingPreference(double Brotli, double Zstd, double Gzip);
