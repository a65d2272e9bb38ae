using System.Text;
using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Negotiation;

public sealed class AcceptEncodingTests
{
    // Available sets are spelled as space-separated coding names and the expected outcome as a
    // coding name or "none" (TrySelect returned false), so the tables read like the headers they test.
    [Theory]
    // RFC 9110 §12.5.3: a plain list; ties go to the server's preference br > zstd > gzip > identity.
    [InlineData("gzip", "br zstd gzip", "gzip")]
    [InlineData("zstd", "br zstd gzip", "zstd")]
    [InlineData("gzip, deflate, br", "br zstd gzip", "br")]
    [InlineData("gzip, deflate, br, zstd", "zstd gzip", "zstd")]
    [InlineData("gzip, deflate, br, zstd", "", "identity")]
    [InlineData("br;q=0.9, zstd;q=0.9, gzip;q=1", "br zstd gzip", "gzip")]
    // §12.4.2: higher weight wins whatever the server prefers.
    [InlineData("br;q=0.5, gzip;q=0.8", "br zstd gzip", "gzip")]
    [InlineData("br;q=0.5, gzip;q=0.8", "br", "br")]
    // §12.4.2: q=0 means "not acceptable".
    [InlineData("gzip;q=0", "br zstd gzip", "identity")]
    [InlineData("br;q=0, *", "br zstd gzip", "zstd")]
    // §12.5.3: "*" matches every coding not listed, identity included when identity is not listed.
    [InlineData("*", "br zstd gzip", "br")]
    [InlineData("*", "", "identity")]
    [InlineData("*;q=0", "br zstd gzip", "none")]
    [InlineData("*;q=0", "", "none")]
    [InlineData("*;q=0, gzip", "br zstd gzip", "gzip")]
    [InlineData("*;q=0, gzip", "br", "none")]
    [InlineData("*;q=0, identity", "br zstd gzip", "identity")]
    [InlineData("*;q=0.5, identity;q=0.6", "br zstd gzip", "identity")]
    [InlineData("*;q=0.5, gzip;q=0.4", "br zstd gzip", "br")]
    [InlineData("*;q=0.5", "", "identity")]
    [InlineData("identity;q=0, *;q=0", "", "none")]
    // §12.5.3: identity is acceptable unless "identity;q=0" excludes it.
    [InlineData("identity", "br zstd gzip", "identity")]
    [InlineData("identity;q=0", "", "none")]
    [InlineData("identity;q=0", "gzip", "none")]
    [InlineData("identity;q=0, gzip", "gzip", "gzip")]
    // An unnamed identity ranks below every coding the client did name.
    [InlineData("gzip;q=0.001", "gzip", "gzip")]
    // §12.5.3: an empty field value means identity only.
    [InlineData("", "br zstd gzip", "identity")]
    [InlineData("  \t ", "br zstd gzip", "identity")]
    // §8.4.1: coding names are case-insensitive; x-gzip is gzip (§8.4.1.3).
    [InlineData("GZIP", "gzip", "gzip")]
    [InlineData("Gzip, BR", "br zstd gzip", "br")]
    [InlineData("x-gzip", "gzip", "gzip")]
    [InlineData("X-GZIP;Q=0.5", "gzip", "gzip")]
    // §5.6.3: OWS around separators; §12.4.2: "q" is case-insensitive.
    [InlineData("gzip ; q = 0.5 , br ; Q=0.4", "br zstd gzip", "gzip")]
    [InlineData("\tgzip\t", "gzip", "gzip")]
    // §12.4.2: qvalue syntax, up to three decimals, never above 1.
    [InlineData("br;q=1.000", "br zstd gzip", "br")]
    [InlineData("br;q=1.", "br", "br")]
    [InlineData("gzip;q=0.", "gzip", "identity")]
    [InlineData("gzip;q=0.999", "gzip", "gzip")]
    // An invalid qvalue makes the whole element ignored, never read as a guess.
    [InlineData("br;q=1.0001", "br zstd gzip", "identity")]
    [InlineData("br;q=1.0001, gzip;q=0.5", "br zstd gzip", "gzip")]
    [InlineData("gzip;q=2", "gzip", "identity")]
    [InlineData("gzip;q=abc", "gzip", "identity")]
    [InlineData("gzip;q=0.1234", "gzip", "identity")]
    [InlineData("gzip;q=-1", "gzip", "identity")]
    [InlineData("gzip;q=0.00000000001", "gzip", "identity")]
    [InlineData("br;q=\"1\", gzip", "br zstd gzip", "gzip")]
    [InlineData("gzip;q=0.5;q=0.6", "gzip", "identity")]
    // Other parameters are ignored, quoted commas included (§5.6.4).
    [InlineData("gzip;q=0.8;level=9", "gzip", "gzip")]
    [InlineData("gzip;level=\"9, fast\";q=0.5, br;q=0.4", "br zstd gzip", "gzip")]
    // A coding listed twice is weighed by its first valid occurrence.
    [InlineData("gzip;q=0, gzip;q=1", "gzip", "identity")]
    [InlineData("gzip;q=1, x-gzip;q=0", "gzip", "gzip")]
    [InlineData("gzip;q=5, gzip;q=0", "gzip", "identity")]
    // Unknown codings are ignored.
    [InlineData("deflate", "br zstd gzip", "identity")]
    [InlineData("deflate, compress;q=1", "", "identity")]
    // Garbage elements are ignored one by one.
    [InlineData(";;;, ,,, gzip;q, br=1", "br zstd gzip", "identity")]
    [InlineData(",,,br,,,", "br", "br")]
    [InlineData("gzip deflate", "gzip", "identity")]
    [InlineData("gzip;;q=1", "gzip", "identity")]
    [InlineData("gzip;=1", "gzip", "identity")]
    [InlineData("gzip;foo=\"unterminated, br", "br zstd gzip", "identity")]
    [InlineData("gzip;foo=\"a\\\"b\", br;q=0.1", "br gzip", "gzip")]
    [InlineData("gzip\u00e9, br", "br gzip", "br")]
    public void TrySelect_HeaderAndAvailableVariants_ChoosesTheBestAcceptableCoding(string header, string available, string expected)
    {
        var accepted = AcceptEncoding.TrySelect(new StringValues(header), Available(available), out var coding);

        Assert.Equal(expected, accepted ? Name(coding) : "none");
    }

    [Theory]
    // RFC 9110 §5.3: several field lines are one comma-separated list.
    [InlineData(new[] { "gzip;q=0.5", "br" }, "br zstd gzip", "br")]
    [InlineData(new[] { "*;q=0", "identity" }, "br zstd gzip", "identity")]
    [InlineData(new[] { "gzip;q=0", "gzip" }, "gzip", "identity")]
    [InlineData(new[] { "", "gzip" }, "gzip", "gzip")]
    // An unterminated quoted-string spoils only its own line.
    [InlineData(new[] { "gzip;foo=\"x", "br" }, "br gzip", "br")]
    public void TrySelect_SeveralFieldLines_CombinesThemAsOneList(string[] lines, string available, string expected)
    {
        var accepted = AcceptEncoding.TrySelect(new StringValues(lines), Available(available), out var coding);

        Assert.Equal(expected, accepted ? Name(coding) : "none");
    }

    [Fact]
    public void TrySelect_NoHeader_ChoosesIdentity()
    {
        var accepted = AcceptEncoding.TrySelect(StringValues.Empty, ContentCodingSet.Brotli | ContentCodingSet.Gzip, out var coding);

        Assert.True(accepted);
        Assert.Equal(ContentCoding.Identity, coding);
    }

    [Theory]
    [InlineData(",", ", br", "br")]
    [InlineData(";", ", br", "br")]
    [InlineData(" ", ", br", "br")]
    [InlineData("\"", ", br", "br")]
    [InlineData("\"\\", ", br", "identity")]
    [InlineData("gzip;q=0.00000000001,", "br", "br")]
    [InlineData("x;a=\"\\\"\",", "br", "br")]
    [InlineData("deflate;q=1;level=\"9\";q=0,", "*;q=0.1", "br")]
    [InlineData("gzip;q=0,", "br", "br")]
    public void TrySelect_HundredThousandHostileElements_Completes(string element, string suffix, string expected)
    {
        var header = new StringBuilder(element.Length * 100_000 + suffix.Length)
            .Insert(0, element, 100_000)
            .Append(suffix)
            .ToString();

        var accepted = AcceptEncoding.TrySelect(new StringValues(header), ContentCodingSet.Brotli | ContentCodingSet.Gzip, out var coding);

        Assert.Equal(expected, accepted ? Name(coding) : "none");
    }

    [Fact]
    public void TrySelect_ThousandDigitQValue_IgnoresTheElement()
    {
        var header = "br;q=0." + new string('0', 1000) + "1, gzip;q=0.5";

        AcceptEncoding.TrySelect(new StringValues(header), ContentCodingSet.Brotli | ContentCodingSet.Gzip, out var coding);

        Assert.Equal(ContentCoding.Gzip, coding);
    }

    [Fact]
    public void TrySelect_AfterWarmUp_AllocatesNothing()
    {
        StringValues[] headers =
        [
            new("gzip, deflate, br, zstd"),
            new("br;q=0.5, gzip;q=0.8, *;q=0"),
            new("gzip;level=\"9, fast\";q=0.5, br;q=1.0001, X-GZIP, identity;q=0"),
            new(new[] { ";;;", "gzip;q=0.001", "*" }),
            new(string.Empty),
            StringValues.Empty,
        ];
        const ContentCodingSet all = ContentCodingSet.Brotli | ContentCodingSet.Zstd | ContentCodingSet.Gzip;
        var sink = 0;
        foreach (var header in headers)
        {
            AcceptEncoding.TrySelect(header, all, out var coding);
            sink += (int)coding;
        }

        var allocated = AllocationWindow.Measure(() =>
        {
            for (var i = 0; i < 1_000; i++)
            {
                AcceptEncoding.TrySelect(headers[i % headers.Length], all, out var coding);
                sink += (int)coding;
            }
        });

        Assert.Equal(0, allocated);
        Assert.NotEqual(0, sink);
    }

    private static ContentCodingSet Available(string names)
    {
        var available = ContentCodingSet.None;
        foreach (var name in names.Split(' ', StringSplitOptions.RemoveEmptyEntries))
        {
            available |= name switch
            {
                "br" => ContentCodingSet.Brotli,
                "zstd" => ContentCodingSet.Zstd,
                "gzip" => ContentCodingSet.Gzip,
                _ => throw new ArgumentException($"Unknown coding {name} in a test table.", nameof(names)),
            };
        }

        return available;
    }

    private static string Name(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => "br",
        ContentCoding.Zstd => "zstd",
        ContentCoding.Gzip => "gzip",
        _ => "identity",
    };
}
