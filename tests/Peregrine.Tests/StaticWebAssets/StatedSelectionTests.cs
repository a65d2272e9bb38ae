using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// The choice among a manifest's encodings picks what MapStaticAssets picks (ASP.NET Core's
/// ContentEncodingNegotiationMatcherPolicy): the client's weight first, then the manifest's
/// Quality (the smaller file), identity last among equals, and only the exact tokens matched.
/// Both forms of the header (the middleware's and the fast path's) choose alike.
/// </summary>
public sealed class StatedSelectionTests
{
    // As the SDK writes them: 1 / (length + 1). Here gzip is the smaller file, as in a
    // Development build (gzip only) or for a tiny file whose Brotli is larger.
    private static readonly EncodingPreference GzipSmaller = new(Brotli: 0.0005, Zstd: 0, Gzip: 0.0006);
    private static readonly EncodingPreference BrotliSmaller = new(Brotli: 0.0007, Zstd: 0, Gzip: 0.0006);

    [Theory]
    // Equal weights: the manifest's preference, whatever the order in the header.
    [InlineData("br, gzip", "br gzip", true, "gzip")]
    [InlineData("gzip, br", "br gzip", false, "br")]
    [InlineData("br, gzip", "br gzip", false, "br")]
    [InlineData("br;q=0.5, gzip;q=0.5", "br gzip", true, "gzip")]
    // A Development build has gzip only: a Brotli client still gets gzip.
    [InlineData("br, gzip", "gzip", true, "gzip")]
    [InlineData("br", "gzip", true, "identity")]
    // The client's weight comes first.
    [InlineData("br;q=1, gzip;q=0.9", "br gzip", true, "br")]
    [InlineData("br;q=0.8, gzip;q=0.9", "br gzip", false, "gzip")]
    [InlineData("gzip;q=0.001", "gzip", true, "gzip")]
    // Identity loses every tie, and wins only by weight.
    [InlineData("identity, gzip", "gzip", true, "gzip")]
    [InlineData("gzip, identity", "gzip", true, "gzip")]
    [InlineData("identity, gzip;q=0.5", "gzip", true, "identity")]
    // q=0 chooses nothing, and nothing chosen is identity, even where identity is refused.
    [InlineData("gzip;q=0", "br gzip", true, "identity")]
    [InlineData("identity;q=0", "br gzip", true, "identity")]
    [InlineData("identity;q=0, gzip;q=0", "gzip", true, "identity")]
    // A coding listed twice counts at its highest weight.
    [InlineData("br;q=0.5, gzip;q=0.8, br;q=1", "br gzip", true, "br")]
    [InlineData("br;q=0, br", "br gzip", true, "br")]
    // Only the exact tokens: "*" and "x-gzip" choose nothing; zstd is not stated.
    [InlineData("*", "br gzip", true, "identity")]
    [InlineData("x-gzip", "gzip", true, "identity")]
    [InlineData("zstd", "br gzip", true, "identity")]
    [InlineData("gzip, deflate, br, zstd", "br gzip", true, "gzip")]
    [InlineData("GZIP", "gzip", true, "gzip")]
    // A malformed element is ignored on its own.
    [InlineData("br;q=2, gzip", "br gzip", false, "gzip")]
    [InlineData("", "br gzip", true, "identity")]
    public void StatedEncodings_AreChosen_AsMapStaticAssetsChooses(string header, string available, bool gzipSmaller, string expected)
    {
        var set = ContentCodingSet.None;
        foreach (var name in available.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            set |= name switch { "br" => ContentCodingSet.Brotli, "gzip" => ContentCodingSet.Gzip, _ => ContentCodingSet.Zstd };
        }

        var preference = gzipSmaller ? GzipSmaller : BrotliSmaller;

        var fromField = AcceptEncoding.SelectStated(new StringValues(header), set, preference);
        var fromSpan = AcceptEncoding.SelectStated(header.AsSpan(), set, preference);

        Assert.Equal(expected, Name(fromField));
        Assert.Equal(fromField, fromSpan);
    }

    [Fact]
    public void StatedEncodings_SeveralFieldLines_AreOneList()
    {
        var coding = AcceptEncoding.SelectStated(new StringValues(["br;q=0.5", "gzip;q=0.9"]), ContentCodingSet.Brotli | ContentCodingSet.Gzip, BrotliSmaller);

        Assert.Equal(ContentCoding.Gzip, coding);
    }

    private static string Name(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => "br",
        ContentCoding.Gzip => "gzip",
        ContentCoding.Zstd => "zstd",
        _ => "identity",
    };
}
