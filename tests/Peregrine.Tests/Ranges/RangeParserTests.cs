using System.Text;
using Microsoft.Extensions.Primitives;
using Peregrine.Ranges;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Ranges;

public sealed class RangeParserTests
{
    // Expected ranges are spelled as Content-Range would write them: inclusive "first-last" pairs,
    // in the order they are to be sent, comma-separated; empty unless the outcome is Partial.
    [Theory]
    // RFC 9110 §14.1.2: the three forms.
    [InlineData("bytes=0-99", 1000, "Partial", "0-99")]
    [InlineData("bytes=100-", 1000, "Partial", "100-999")]
    [InlineData("bytes=-500", 1000, "Partial", "500-999")]
    [InlineData("bytes=0-0", 1000, "Partial", "0-0")]
    [InlineData("bytes=999-", 1000, "Partial", "999-999")]
    [InlineData("bytes=-1", 1000, "Partial", "999-999")]
    // §14.1.2: a suffix longer than the representation selects all of it.
    [InlineData("bytes=-5000", 1000, "Partial", "0-999")]
    // §14.1.2: a last-pos at or past the end means "to the end".
    [InlineData("bytes=0-5000", 1000, "Partial", "0-999")]
    [InlineData("bytes=0-999", 1000, "Partial", "0-999")]
    [InlineData("bytes=0-1000", 1000, "Partial", "0-999")]
    [InlineData("bytes=0-9223372036854775807", 1000, "Partial", "0-999")]
    // The whole representation as one range is still a 206, as nginx answers "bytes=0-".
    [InlineData("bytes=0-", 1000, "Partial", "0-999")]
    // §14.1.1: the unit is case-insensitive; §5.6.1: empty list elements and OWS are accepted.
    [InlineData("BYTES=0-9", 1000, "Partial", "0-9")]
    [InlineData("Bytes=0-9", 1000, "Partial", "0-9")]
    [InlineData("  bytes=0-9  ", 1000, "Partial", "0-9")]
    [InlineData("bytes=0-9 , 500-599", 1000, "Partial", "0-9,500-599")]
    [InlineData("bytes=,0-9,,500-599,", 1000, "Partial", "0-9,500-599")]
    [InlineData("bytes=0000000000000000000000005-9", 1000, "Partial", "5-9")]
    // §14.1.2 examples for a representation of 10000 bytes.
    [InlineData("bytes=9500-", 10000, "Partial", "9500-9999")]
    [InlineData("bytes=0-0,-1", 10000, "Partial", "0-0,9999-9999")]
    [InlineData("bytes= 0-999, 4500-5499, -1000", 10000, "Partial", "0-999,4500-5499,9000-9999")]
    [InlineData("bytes=500-600,601-999", 10000, "Partial", "500-999")]
    [InlineData("bytes=500-700,601-999", 10000, "Partial", "500-999")]
    // §14.1.1: first-pos at or past the end is unsatisfiable; the set is unsatisfiable only when
    // every range-spec is, otherwise the unsatisfiable ones are dropped.
    [InlineData("bytes=1000-", 1000, "Unsatisfiable", "")]
    [InlineData("bytes=1000-2000", 1000, "Unsatisfiable", "")]
    [InlineData("bytes=9223372036854775807-", 1000, "Unsatisfiable", "")]
    [InlineData("bytes=-0", 1000, "Unsatisfiable", "")]
    [InlineData("bytes=1000-, -0, 5000-6000", 1000, "Unsatisfiable", "")]
    [InlineData("bytes=1000-, 0-9", 1000, "Partial", "0-9")]
    [InlineData("bytes=0-9, 5000-6000", 1000, "Partial", "0-9")]
    [InlineData("bytes=-0, 990-", 1000, "Partial", "990-999")]
    // §14.1.2: against zero bytes an int-range is unsatisfiable; a non-zero suffix-range is
    // satisfiable but selects nothing, so the empty representation is sent whole.
    [InlineData("bytes=0-", 0, "Unsatisfiable", "")]
    [InlineData("bytes=0-0", 0, "Unsatisfiable", "")]
    [InlineData("bytes=-0", 0, "Unsatisfiable", "")]
    [InlineData("bytes=-1", 0, "Ignore", "")]
    [InlineData("bytes=0-,-5", 0, "Ignore", "")]
    // §14.1.1: last-pos below first-pos makes the range-spec, and so the header, invalid (§14.2).
    [InlineData("bytes=5-4", 1000, "Ignore", "")]
    [InlineData("bytes=0-9,5-4", 1000, "Ignore", "")]
    [InlineData("bytes=5000-4000", 1000, "Ignore", "")]
    // §14.2: a unit the server does not understand, or any syntax error: ignore.
    [InlineData("items=0-9", 1000, "Ignore", "")]
    [InlineData("bytes 0-9", 1000, "Ignore", "")]
    [InlineData("bytes =0-9", 1000, "Ignore", "")]
    [InlineData("bytes=", 1000, "Ignore", "")]
    [InlineData("bytes=,,,", 1000, "Ignore", "")]
    [InlineData("bytes=abc", 1000, "Ignore", "")]
    [InlineData("bytes=0-9x", 1000, "Ignore", "")]
    [InlineData("bytes=0 - 9", 1000, "Ignore", "")]
    [InlineData("bytes=--5", 1000, "Ignore", "")]
    [InlineData("bytes=-", 1000, "Ignore", "")]
    [InlineData("bytes=1-2-3", 1000, "Ignore", "")]
    [InlineData("bytes=+1-2", 1000, "Ignore", "")]
    [InlineData("bytes=0x10-20", 1000, "Ignore", "")]
    [InlineData("bytes=0-9;x", 1000, "Ignore", "")]
    [InlineData("", 1000, "Ignore", "")]
    // §14.1.2: numerals too large for a long are refused, not wrapped.
    [InlineData("bytes=0-99999999999999999999", 1000, "Ignore", "")]
    [InlineData("bytes=99999999999999999999-", 1000, "Ignore", "")]
    [InlineData("bytes=-99999999999999999999", 1000, "Ignore", "")]
    [InlineData("bytes=0-9223372036854775808", 1000, "Ignore", "")]
    // §14.2, §14.3: overlapping and nearly adjacent ranges are coalesced (gap under 80 bytes).
    [InlineData("bytes=0-9,10-19", 1000, "Partial", "0-19")]
    [InlineData("bytes=0-9\t,\t20-29", 1000, "Partial", "0-29")]
    [InlineData("bytes=0-9,89-99", 1000, "Partial", "0-99")]
    [InlineData("bytes=0-9,90-99", 1000, "Partial", "0-9,90-99")]
    [InlineData("bytes=0-99,50-149,500-599", 1000, "Partial", "0-149,500-599")]
    [InlineData("bytes=0-,0-,0-,0-", 1000, "Partial", "0-999")]
    [InlineData("bytes=-100,0-", 1000, "Partial", "0-999")]
    // §14.6: parts follow the order of the range-specs; a merged range takes the earliest place.
    [InlineData("bytes=500-599,0-99", 1000, "Partial", "500-599,0-99")]
    [InlineData("bytes=500-599,0-99,550-700", 1000, "Partial", "500-700,0-99")]
    [InlineData("bytes=900-,0-9,300-309,350-359", 1000, "Partial", "900-999,0-9,300-359")]
    public void Parse_HeaderAgainstLength_GivesOutcomeAndRanges(string header, long length, string outcome, string ranges)
    {
        var destination = new ByteRange[RangeParser.MaxRanges];

        var actual = RangeParser.Parse(new StringValues(header), length, destination, out var count);

        Assert.Equal(outcome, actual.ToString());
        Assert.Equal(ranges, Spell(destination.AsSpan(0, count)));
    }

    [Fact]
    public void Parse_RepresentationNearLongMaxValue_DoesNotOverflow()
    {
        var destination = new ByteRange[RangeParser.MaxRanges];

        var outcome = RangeParser.Parse(new StringValues("bytes=0-0,-1,9223372036854775806-"), long.MaxValue, destination, out var count);

        Assert.Equal(RangeOutcome.Partial, outcome);
        Assert.Equal("0-0,9223372036854775806-9223372036854775806", Spell(destination.AsSpan(0, count)));
    }

    [Fact]
    public void Parse_NoHeader_Ignores()
    {
        var outcome = RangeParser.Parse(StringValues.Empty, 1000, new ByteRange[RangeParser.MaxRanges], out var count);

        Assert.Equal(RangeOutcome.Ignore, outcome);
        Assert.Equal(0, count);
    }

    [Fact]
    public void Parse_TwoFieldLines_Ignores()
    {
        // RFC 9110 §14.2: Range is one ranges-specifier, so two lines cannot be combined.
        var outcome = RangeParser.Parse(new StringValues(new[] { "bytes=0-9", "bytes=20-29" }), 1000, new ByteRange[RangeParser.MaxRanges], out var count);

        Assert.Equal(RangeOutcome.Ignore, outcome);
        Assert.Equal(0, count);
    }

    [Theory]
    [InlineData(RangeParser.MaxRanges, "Partial")]
    [InlineData(RangeParser.MaxRanges + 1, "Ignore")]
    public void Parse_DistantRanges_IgnoresMoreThanMaxRanges(int ranges, string outcome)
    {
        // 1000 bytes apart: nothing to coalesce.
        var header = "bytes=" + string.Join(',', Enumerable.Range(0, ranges).Select(i => $"{i * 1000}-{(i * 1000) + 9}"));
        var destination = new ByteRange[RangeParser.MaxRanges];

        var actual = RangeParser.Parse(new StringValues(header), 1_000_000, destination, out var count);

        Assert.Equal(outcome, actual.ToString());
        Assert.Equal(actual == RangeOutcome.Partial ? ranges : 0, count);
    }

    [Theory]
    [InlineData(RangeParser.MaxRangeSpecs, "Partial")]
    [InlineData(RangeParser.MaxRangeSpecs + 1, "Ignore")]
    public void Parse_OverlappingRanges_IgnoresMoreThanMaxRangeSpecs(int specs, string outcome)
    {
        // CVE-2011-3192: the same bytes asked for over and over. Up to the limit they coalesce
        // into one range; past it the header is not read at all.
        var header = "bytes=" + string.Join(',', Enumerable.Repeat("0-", specs));
        var destination = new ByteRange[RangeParser.MaxRanges];

        var actual = RangeParser.Parse(new StringValues(header), 1000, destination, out var count);

        Assert.Equal(outcome, actual.ToString());
        Assert.Equal(actual == RangeOutcome.Partial ? "0-999" : "", Spell(destination.AsSpan(0, count)));
    }

    [Theory]
    [InlineData(",", "0-9", "Partial")]
    [InlineData(" , ", "0-9", "Partial")]
    [InlineData("0-0,", "", "Ignore")]
    [InlineData("9", "-9", "Ignore")]
    [InlineData("-", "", "Ignore")]
    public void Parse_HostileHeaderOfTenThousandRepeats_CompletesWithoutThrowing(string repeated, string suffix, string outcome)
    {
        var header = new StringBuilder("bytes=").Insert(6, repeated, 10_000).Append(suffix).ToString();

        var actual = RangeParser.Parse(new StringValues(header), 1000, new ByteRange[RangeParser.MaxRanges], out _);

        Assert.Equal(outcome, actual.ToString());
    }

    [Fact]
    public void Parse_DestinationBelowMaxRanges_Throws()
    {
        Assert.Throws<ArgumentException>(
            () => RangeParser.Parse(new StringValues("bytes=0-9"), 1000, new ByteRange[RangeParser.MaxRanges - 1], out _));
    }

    [Fact]
    public void Parse_AfterWarmUp_AllocatesNothing()
    {
        StringValues[] headers =
        [
            new("bytes=0-99"),
            new("bytes=-500"),
            new("bytes=500-599,0-99,550-700,900-"),
            new("bytes=1000-"),
            new("bytes=abc"),
            new("bytes=" + string.Join(',', Enumerable.Repeat("0-", 150))),
            new(new[] { "bytes=0-1", "bytes=2-3" }),
        ];
        var destination = new ByteRange[RangeParser.MaxRanges];
        var sink = 0;
        foreach (var header in headers)
        {
            RangeParser.Parse(header, 1000, destination, out var count);
            sink += count;
        }

        var allocated = AllocationWindow.Measure(() =>
        {
            for (var i = 0; i < 1_000; i++)
            {
                RangeParser.Parse(headers[i % headers.Length], 1000, destination, out var count);
                sink += count;
            }
        });

        Assert.Equal(0, allocated);
        Assert.NotEqual(0, sink);
    }

    private static string Spell(ReadOnlySpan<ByteRange> ranges)
    {
        var text = new StringBuilder();
        foreach (var range in ranges)
        {
            text.Append(text.Length > 0 ? "," : "").Append(range.Start).Append('-').Append(range.Last);
        }

        return text.ToString();
    }
}
