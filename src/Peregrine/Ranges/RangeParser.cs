using Microsoft.Extensions.Primitives;

namespace Peregrine.Ranges;

/// <summary>A satisfiable byte range: the offset of its first byte and how many bytes it covers.</summary>
internal readonly record struct ByteRange(long Start, long Length)
{
    /// <summary>The offset of the last byte, as Content-Range writes it (RFC 9110 §14.4).</summary>
    public long Last => Start + Length - 1;
}

/// <summary>What to do with a request's Range header field.</summary>
internal enum RangeOutcome : byte
{
    /// <summary>Serve the whole representation with 200, as if no Range had been sent.</summary>
    Ignore,

    /// <summary>Serve the parsed ranges with 206 (RFC 9110 §15.3.7).</summary>
    Partial,

    /// <summary>Answer 416 with <c>Content-Range: bytes */length</c> (RFC 9110 §15.5.17).</summary>
    Unsatisfiable,
}

/// <summary>
/// Reads a Range header field (RFC 9110 §14.2) against a representation of known length.
/// </summary>
/// <remarks>
/// <para>
/// Security limits, stated plainly. A range request can ask one small file to be sent many times
/// over (many overlapping ranges) or cut into thousands of tiny parts, each with its own part
/// header: the range DoS of CVE-2011-3192 against Apache. §14.2 lets a server ignore such requests
/// and §14.3 lets it coalesce ranges, and this parser does both:
/// </para>
/// <list type="bullet">
/// <item>more than <see cref="MaxRangeSpecs"/> range-specs: the header is ignored (200) without
/// reading further;</item>
/// <item>ranges that overlap, or are separated by fewer than <see cref="CoalesceGap"/> bytes, are
/// merged, so no byte is sent twice and no part is smaller than its own header would be;</item>
/// <item>more than <see cref="MaxRanges"/> ranges left after merging: the header is ignored (200).</item>
/// </list>
/// <para>
/// Ignoring is always safe: a 200 with the whole representation is a correct answer to any range
/// request (§14.2: "A server MAY ignore the Range header field"). Parsing never allocates (the
/// scratch space is on the stack) and never throws on anything a client sends; the work is linear
/// in the field length plus a sort of at most <see cref="MaxRangeSpecs"/> entries.
/// </para>
/// </remarks>
internal static class RangeParser
{
    /// <summary>
    /// The most ranges a 206 will carry after coalescing. Real clients ask for one range (media
    /// players, download resumers) or a handful (PDF byte serving); sixteen leaves room for those
    /// while keeping a multipart response's part headers small. nginx's <c>max_ranges</c> is
    /// unlimited by default and Apache's <c>MaxRanges</c>, added after CVE-2011-3192, defaults to
    /// 200; both count ranges as sent, where this counts them after merging, which is stricter
    /// against abuse and looser for honest overlapping requests.
    /// </summary>
    internal const int MaxRanges = 16;

    /// <summary>
    /// The most range-specs read from one header. Past this the request is not an honest one and
    /// is ignored outright, which also bounds the stack scratch space and the sort.
    /// </summary>
    internal const int MaxRangeSpecs = 100;

    /// <summary>
    /// Ranges closer than this many bytes are merged (§14.3 allows coalescing ranges "separated by
    /// a gap that is smaller than the overhead of sending multiple parts"). A part header costs at
    /// least CRLF, "--", the boundary, CRLF, a Content-Range line and a blank line: about 80 bytes
    /// with the shortest boundary and no Content-Type, so sending a gap under 80 bytes is never
    /// dearer than a separate part.
    /// </summary>
    internal const long CoalesceGap = 80;

    /// <summary>
    /// Parses <paramref name="range"/> for a representation of <paramref name="length"/> bytes.
    /// </summary>
    /// <param name="range">Every Range field line of the request.</param>
    /// <param name="length">The current length of the selected representation.</param>
    /// <param name="destination">Receives the ranges to send, in the order the client asked for them
    /// (§14.6); needs room for <see cref="MaxRanges"/>.</param>
    /// <param name="count">How many ranges were written; 0 unless the outcome is
    /// <see cref="RangeOutcome.Partial"/>.</param>
    public static RangeOutcome Parse(StringValues range, long length, Span<ByteRange> destination, out int count)
    {
        CheckArguments(length, destination);
        count = 0;

        // Range is one ranges-specifier, not a list (§14.2): two field lines cannot be combined
        // into anything valid, so they are ignored rather than guessed at.
        if (range.Count != 1)
        {
            return RangeOutcome.Ignore;
        }

        return Parse(range[0].AsSpan(), length, destination, out count);
    }

    /// <summary>
    /// Parses <paramref name="range"/>, the value of a request's one Range field line, for a
    /// representation of <paramref name="length"/> bytes; as <see cref="Parse(StringValues, long, Span{ByteRange}, out int)"/>.
    /// </summary>
    public static RangeOutcome Parse(ReadOnlySpan<char> range, long length, Span<ByteRange> destination, out int count)
    {
        CheckArguments(length, destination);
        count = 0;
        var value = range.Trim(" \t");

        // ranges-specifier = range-unit "=" range-set (§14.1.1); range units compare
        // case-insensitively (§14.1). A server MUST ignore a unit it does not understand (§14.2).
        const string BytesUnit = "bytes=";
        if (!value.StartsWith(BytesUnit, StringComparison.OrdinalIgnoreCase))
        {
            return RangeOutcome.Ignore;
        }

        Span<Candidate> candidates = stackalloc Candidate[MaxRangeSpecs];
        var satisfiable = 0;
        var specs = 0;
        var emptySuffix = false;
        var rest = value[BytesUnit.Length..];

        // range-set = 1#range-spec. A list may carry empty elements, which recipients must accept
        // (§5.6.1), so "bytes=0-1,,2-3" is valid and a run of commas costs one pass and nothing else.
        while (true)
        {
            var comma = rest.IndexOf(',');
            var element = (comma < 0 ? rest : rest[..comma]).Trim(" \t");
            if (!element.IsEmpty)
            {
                if (++specs > MaxRangeSpecs)
                {
                    return RangeOutcome.Ignore;
                }

                switch (ParseSpec(element, length, out var first, out var last))
                {
                    case Spec.Invalid:
                        // §14.2: a server MAY ignore a Range with an invalid ranges-specifier.
                        // One bad range-spec makes the whole set invalid.
                        return RangeOutcome.Ignore;
                    case Spec.Satisfiable:
                        candidates[satisfiable++] = new Candidate(first, last, specs);
                        break;
                    case Spec.SatisfiableButEmpty:
                        emptySuffix = true;
                        break;
                }
            }

            if (comma < 0)
            {
                break;
            }

            rest = rest[(comma + 1)..];
        }

        if (specs == 0)
        {
            return RangeOutcome.Ignore;
        }

        // §14.1.2: against a zero-length representation a non-zero suffix-range is satisfiable, but
        // it selects no bytes and §14.4's incl-range cannot describe it, so neither 206 nor 416 is
        // right: the empty representation is sent whole with 200.
        if (emptySuffix)
        {
            return RangeOutcome.Ignore;
        }

        // §14.1.1: the set is unsatisfiable only when every range-spec in it is.
        if (satisfiable == 0)
        {
            return RangeOutcome.Unsatisfiable;
        }

        var merged = Coalesce(candidates[..satisfiable]);
        if (merged > MaxRanges)
        {
            return RangeOutcome.Ignore;
        }

        // §14.6: parts SHOULD follow the order of the range-specs, except those coalesced. Each
        // merged range takes the place of the earliest range-spec it absorbed.
        var result = candidates[..merged];
        SortBy(result, byOrder: true);
        for (var i = 0; i < result.Length; i++)
        {
            destination[i] = new ByteRange(result[i].First, result[i].Last - result[i].First + 1);
        }

        // A single range that turns out to cover the whole representation is still answered with
        // 206, as nginx does for "bytes=0-": the client asked for a range and Content-Range tells it
        // what it got.
        count = merged;
        return RangeOutcome.Partial;
    }

    // Sorts by first byte and merges in place; returns how many ranges are left at the front.
    private static int Coalesce(Span<Candidate> ranges)
    {
        SortBy(ranges, byOrder: false);
        var written = 0;
        foreach (var next in ranges)
        {
            // next.First - previous.Last - 1 is the gap; negative when they overlap. No overflow:
            // both positions lie in [0, length).
            if (written > 0 && next.First - ranges[written - 1].Last - 1 < CoalesceGap)
            {
                ref var previous = ref ranges[written - 1];
                previous = new Candidate(
                    previous.First,
                    Math.Max(previous.Last, next.Last),
                    Math.Min(previous.Order, next.Order));
            }
            else
            {
                ranges[written++] = next;
            }
        }

        return written;
    }

    // At most MaxRangeSpecs entries, usually already in order, where insertion sort is linear; it is
    // also stable and needs no comparer object.
    private static void SortBy(Span<Candidate> items, bool byOrder)
    {
        for (var i = 1; i < items.Length; i++)
        {
            var item = items[i];
            var j = i - 1;
            while (j >= 0 && Key(item, byOrder) < Key(items[j], byOrder))
            {
                items[j + 1] = items[j];
                j--;
            }

            items[j + 1] = item;
        }

        static long Key(Candidate candidate, bool byOrder) => byOrder ? candidate.Order : candidate.First;
    }

    // range-spec for the bytes unit (§14.1.2): int-range = first-pos "-" [ last-pos ], or
    // suffix-range = "-" suffix-length. No whitespace inside.
    private static Spec ParseSpec(ReadOnlySpan<char> spec, long length, out long first, out long last)
    {
        first = last = 0;
        if (spec[0] == '-')
        {
            if (!TryParsePosition(spec[1..], out var suffix, out var consumed) || consumed != spec.Length - 1)
            {
                return Spec.Invalid;
            }

            // §14.1.2: a suffix-range is satisfiable when its suffix-length is non-zero; one longer
            // than the representation selects all of it.
            if (suffix == 0)
            {
                return Spec.Unsatisfiable;
            }

            if (length == 0)
            {
                return Spec.SatisfiableButEmpty;
            }

            first = suffix >= length ? 0 : length - suffix;
            last = length - 1;
            return Spec.Satisfiable;
        }

        if (!TryParsePosition(spec, out first, out var firstDigits)
            || firstDigits == spec.Length
            || spec[firstDigits] != '-')
        {
            return Spec.Invalid;
        }

        var tail = spec[(firstDigits + 1)..];
        if (tail.IsEmpty)
        {
            last = long.MaxValue;
        }
        else if (!TryParsePosition(tail, out last, out var lastDigits) || lastDigits != tail.Length || last < first)
        {
            // §14.1.1: an int-range whose last-pos is below its first-pos is invalid.
            return Spec.Invalid;
        }

        // §14.1.2: an int-range is satisfiable when first-pos is below the current length; a
        // last-pos at or past the end means "to the end". This makes every int-range
        // unsatisfiable against a zero-length representation, which is what §14.1.2 says.
        if (first >= length)
        {
            return Spec.Unsatisfiable;
        }

        last = Math.Min(last, length - 1);
        return Spec.Satisfiable;
    }

    // 1*DIGIT at the start of text. §14.1.2 tells recipients to "anticipate potentially large
    // decimal numerals and prevent parsing errors due to integer conversion overflows": a value
    // past long.MaxValue makes the spec invalid (the whole header is then ignored and the full
    // representation sent, which is also what a client asking for that much would get).
    private static bool TryParsePosition(ReadOnlySpan<char> text, out long value, out int consumed)
    {
        value = 0;
        consumed = 0;
        while (consumed < text.Length && char.IsAsciiDigit(text[consumed]))
        {
            var digit = text[consumed] - '0';
            if (value > (long.MaxValue - digit) / 10)
            {
                return false;
            }

            value = (value * 10) + digit;
            consumed++;
        }

        return consumed > 0;
    }

    private static void CheckArguments(long length, Span<ByteRange> destination)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        if (destination.Length < MaxRanges)
        {
            ThrowDestinationTooSmall(nameof(destination));
        }
    }

    private static void ThrowDestinationTooSmall(string paramName) =>
        throw new ArgumentException($"The destination must have room for {MaxRanges} ranges.", paramName);

    private enum Spec : byte
    {
        Invalid,
        Unsatisfiable,
        Satisfiable,

        // A non-zero suffix-range against a zero-length representation.
        SatisfiableButEmpty,
    }

    // Order is the 1-based position of the range-spec in the header, kept to restore the client's
    // order after sorting by position in the representation.
    private readonly record struct Candidate(long First, long Last, int Order);
}
