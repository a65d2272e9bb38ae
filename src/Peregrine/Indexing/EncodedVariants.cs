
namespace Peregrine.Indexing;

/// <summary>
/// The encoded representations of one file (RFC 9110 §8.4), made once and published on the
/// entry with a single reference write; a request reads them once and sees one consistent set.
/// </summary>
internal sealed class EncodedVariants
{
    public EncodedVariants(Representation? brotli, Representation? zstd, Representation? gzip)
    {
        Brotli = brotli;
        Zstd = zstd;
        Gzip = gzip;
        Available = (brotli is null ? ContentCodingSet.None : ContentCodingSet.Brotli)
            | (zstd is null ? ContentCodingSet.None : ContentCodingSet.Zstd)
            | (gzip is null ? ContentCodingSet.None : ContentCodingSet.Gzip);
    }

    public static EncodedVariants None { get; } = new(null, null, null);

    public ContentCodingSet Available { get; }

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
