using System.Text;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Primitives;
using Peregrine.Conditional;
using Peregrine.Http1;
using Peregrine.Indexing;
using Peregrine.Listing;
using Peregrine.Negotiation;
using Peregrine.Ranges;
using Peregrine.Server.Configuration;

namespace Peregrine.Tests.Fuzzing;

/// <summary>A property a parser must keep, broken by one input.</summary>
public sealed class PropertyViolation(string message) : Exception(message);

/// <summary>
/// Coverage-guided fuzz targets for every parser that reads bytes from a client or a config
/// file. Each takes one input and throws (a <see cref="PropertyViolation"/> or the parser's own
/// exception) when a property fails: the parser throws; its work is not linear in the input's
/// length; a range lies outside the representation; the fast path accepts a head that the
/// request grammar (RFC 9112) refuses, or frames a head one way whole and another in pieces.
/// tests/Peregrine.FuzzTargets runs them under AFL++ (tests/fuzz/run); ParserCorpusTests
/// replays the kept corpus, every input that ever failed included.
/// </summary>
public static partial class ParserTargets
{
    /// <summary>Every target by name; the corpus folders under tests/fuzz/corpus have the same names.</summary>
    public static readonly IReadOnlyDictionary<string, Action<byte[]>> All = new Dictionary<string, Action<byte[]>>
    {
        ["request-head"] = RequestHeadTarget,
        ["range"] = RangeTarget,
        ["accept-encoding"] = AcceptEncodingTarget,
        ["preconditions"] = PreconditionsTarget,
        ["listing-query"] = ListingQueryTarget,
        ["config"] = ConfigTarget,
    };

    internal static void Check(bool condition, string property, ReadOnlySpan<byte> input)
    {
        if (!condition)
        {
            throw new PropertyViolation($"{property} (input {Convert.ToHexString(input)})");
        }
    }

    // ---- Range (RFC 9110 §14.2) ----

    private static void RangeTarget(byte[] input)
    {
        // First eight bytes: the representation's length; the rest: the field value.
        var length = input.Length >= 8 ? (long)(BitConverter.ToUInt64(input, 0) % (1UL << 50)) : input.Length * 1000L;
        var field = Latin1(input.AsSpan(Math.Min(8, input.Length)));
        Span<ByteRange> ranges = stackalloc ByteRange[RangeParser.MaxRanges];
        var outcome = RangeParser.Parse(field, length, ranges, out var count);
        Check(outcome == RangeOutcome.Partial ? count is > 0 and <= RangeParser.MaxRanges : count == 0, "count matches the outcome", input);
        for (var i = 0; i < count; i++)
        {
            var r = ranges[i];
            Check(r.Start >= 0 && r.Length > 0 && r.Start + r.Length <= length, "every range lies inside the representation", input);
            for (var j = 0; j < i; j++)
            {
                var o = ranges[j];
                Check(r.Start >= o.Start + o.Length + RangeParser.CoalesceGap || o.Start >= r.Start + r.Length + RangeParser.CoalesceGap, "ranges are coalesced: none overlap or lie within the gap", input);
            }
        }

        Check(outcome == RangeOutcome.Ignore || field.AsSpan().Trim(" \t").StartsWith("bytes=", StringComparison.OrdinalIgnoreCase), "206 or 416 only for a bytes range", input);
        Linear(input, static text => RangeParser.Parse(text, 1_000_000, stackalloc ByteRange[RangeParser.MaxRanges], out _));
    }

    // ---- Accept-Encoding (RFC 9110 §12.5.3) ----

    private static void AcceptEncodingTarget(byte[] input)
    {
        var available = input.Length > 0 ? (ContentCodingSet)(input[0] & 7) : ContentCodingSet.None;
        var field = Latin1(input.AsSpan(Math.Min(1, input.Length)));
        var chosen = AcceptEncoding.TrySelect(field, available, out var coding);
        if (chosen && coding != ContentCoding.Identity)
        {
            var bit = coding switch
            {
                ContentCoding.Brotli => ContentCodingSet.Brotli,
                ContentCoding.Zstd => ContentCodingSet.Zstd,
                _ => ContentCodingSet.Gzip,
            };
            Check((available & bit) != 0, "the chosen coding is one the resource has", input);
        }

        // The same field as one line or as two lines split at a comma is the same list (RFC 9110 §5.3).
        var comma = field.IndexOf(',');
        if (comma > 0 && !field.Contains('"', StringComparison.Ordinal))
        {
            var split = AcceptEncoding.TrySelect(new StringValues([field[..comma], field[(comma + 1)..]]), available, out var splitCoding);
            Check(split == chosen && (!chosen || splitCoding == coding), "one line or two lines give the same choice", input);
        }

        Check(AcceptEncoding.TrySelect(field.AsSpan(), available, out var spanCoding) == chosen && (!chosen || spanCoding == coding), "the span overload agrees", input);
        Linear(input, static text => AcceptEncoding.TrySelect(text, ContentCodingSet.Brotli | ContentCodingSet.Gzip | ContentCodingSet.Zstd, out _));
    }

    // ---- Listing query ----

    private static void ListingQueryTarget(byte[] input)
    {
        var text = Encoding.UTF8.GetString(input);
        var query = DirectoryListing.ParseQuery(text.AsSpan());
        Check(Enum.IsDefined(query.Sort), "the sort is a known column", input);
        Check(query.PageSize == DirectoryListing.DefaultPageSize, "the page size is the server's", input);
        Check(query.Page >= 0, "the page number is not negative", input);
        Check(DirectoryListing.ParseQuery("?" + text.TrimStart('?')) == query || text.StartsWith("??", StringComparison.Ordinal), "a leading '?' is optional", input);
        Linear(input, static text => DirectoryListing.ParseQuery(text.AsSpan()));
    }

    // ---- Configuration values (command line, environment, config file) ----

    private static void ConfigTarget(byte[] input)
    {
        if (input.Length == 0)
        {
            return;
        }

        // First byte: which source; the rest: NUL-separated words (arguments, or NAME=value
        // pairs), or the config file's text.
        var text = Encoding.UTF8.GetString(input.AsSpan(1));
        var words = text.Split('\0');
        switch (input[0] % 3)
        {
            case 0:
                var errors = new List<string>();
                CommandLine.Parse(words, errors);
                CheckMessages(errors, "--", input);
                break;
            case 1:
                var environment = new Dictionary<string, string>();
                foreach (var word in words)
                {
                    var equals = word.IndexOf('=');
                    if (equals > 0)
                    {
                        environment["PEREGRINE_" + word[..equals].ToUpperInvariant()] = word[(equals + 1)..];
                    }
                }

                var warnings = new List<string>();
                var values = EnvironmentSource.Read(environment, warnings, out _);
                errors = [];
                foreach (var value in values)
                {
                    value.Option.Apply(new ServerSettings(), value, errors);
                }

                CheckMessages(errors, "PEREGRINE_", input);
                break;
            default:
                ConfigFileValues(text, input);
                break;
        }
    }

    private static void ConfigFileValues(string json, byte[] input)
    {
        var file = Path.Combine(Path.GetTempPath(), $"peregrine-fuzz-{Environment.ProcessId}.json");
        File.WriteAllText(file, json);
        var errors = new List<string>();
        var values = ConfigFile.Read(new SettingValue(OptionTable.Config, [file], SettingSource.CommandLine), errors);
        foreach (var value in values)
        {
            value.Option.Apply(new ServerSettings(), value, errors);
        }

        CheckMessages(errors, "", input);
    }

    private static void CheckMessages(List<string> errors, string prefix, byte[] input)
    {
        foreach (var error in errors)
        {
            Check(error.Length > 0 && !error.Contains("Exception", StringComparison.Ordinal), "an error is a message, not an exception's text", input);
            Check(prefix.Length == 0 || error.StartsWith(prefix, StringComparison.Ordinal) || error.StartsWith(OptionTable.Root.Flag, StringComparison.Ordinal) || !error.Contains('(', StringComparison.Ordinal) || error.Contains("line", StringComparison.Ordinal), "an error names the option as its source spells it", input);
        }
    }

    // ---- Preconditions (RFC 9110 §13) ----

    private static void PreconditionsTarget(byte[] input)
    {
        // Fields separated by LF: If-Match, If-None-Match, If-Modified-Since, If-Unmodified-Since, If-Range.
        var fields = Latin1(input).Split('\n');
        IHeaderDictionary headers = new HeaderDictionary();
        string[] names = [HeaderNames.IfMatch, HeaderNames.IfNoneMatch, HeaderNames.IfModifiedSince, HeaderNames.IfUnmodifiedSince, HeaderNames.IfRange];
        for (var i = 0; i < names.Length && i < fields.Length; i++)
        {
            if (fields[i].Length > 0)
            {
                headers[names[i]] = fields[i];
            }
        }

        const string Tag = "\"abc\"";
        var lastModified = new DateTimeOffset(2024, 1, 2, 3, 4, 5, TimeSpan.Zero);
        var lastModifiedHeader = Microsoft.Net.Http.Headers.HeaderUtilities.FormatDate(lastModified);
        var result = ConditionalRequest.Evaluate(headers, Tag, lastModifiedHeader, lastModified);
        ConditionalRequest.IfRangeHolds(headers.IfRange, Tag, lastModified);

        // Against a strict reading of the entity-tag list grammar (RFC 9110 §8.8.3): where the
        // field is a valid list, the scanner's match must be the grammar's.
        foreach (var (field, weak) in new[] { (headers.IfMatch.ToString(), false), (headers.IfNoneMatch.ToString(), true) })
        {
            if (field.Length > 0 && StrictTagList(field) is { } tags)
            {
                var expected = tags.Any(t => t == "*" || t == Tag || (weak && t == "W/" + Tag));
                Check(ConditionalRequest.ValueMatches(field, Tag, weak) == expected, "a valid entity-tag list matches as the grammar reads it", input);
            }
        }

        if (headers.IfMatch.Count == 1 && StrictTagList(headers.IfMatch.ToString()) is { } ifMatch && !ifMatch.Any(t => t == "*" || t == Tag))
        {
            Check(result == PreconditionResult.Failed, "an If-Match that matches nothing fails (§13.2.2 step 1)", input);
        }

        if (headers.IfMatch.Count == 0 && headers.IfUnmodifiedSince.Count == 0 && headers.IfNoneMatch.Count == 1
            && StrictTagList(headers.IfNoneMatch.ToString()) is { } ifNoneMatch)
        {
            var matches = ifNoneMatch.Any(t => t == "*" || t == Tag || t == "W/" + Tag);
            Check(result == (matches ? PreconditionResult.NotModified : PreconditionResult.Proceed), "If-None-Match decides a GET alone (§13.2.2 step 3)", input);
        }

        Linear(input, static text => ConditionalRequest.ValueMatches(text, Tag, weak: true));
    }

    /// <summary>The entity-tags of a field that is exactly a valid <c>#entity-tag</c> list or <c>*</c>; null otherwise.</summary>
    private static List<string>? StrictTagList(string field)
    {
        if (field.Trim(' ', '\t') == "*")
        {
            return ["*"];
        }

        var tags = new List<string>();
        var i = 0;
        while (true)
        {
            while (i < field.Length && field[i] is ' ' or '\t' or ',')
            {
                i++;
            }

            if (i == field.Length)
            {
                return tags.Count > 0 ? tags : null;
            }

            var start = i;
            if (field.AsSpan(i).StartsWith("W/", StringComparison.Ordinal))
            {
                i += 2;
            }

            if (i >= field.Length || field[i] != '"')
            {
                return null;
            }

            var close = field.IndexOf('"', i + 1);
            if (close < 0 || field.AsSpan(i + 1, close - i - 1).ContainsAnyExcept(EtagChars))
            {
                return null;
            }

            tags.Add(field[start..(close + 1)]);
            i = close + 1;
            var next = i;
            while (next < field.Length && field[next] is ' ' or '\t')
            {
                next++;
            }

            if (next < field.Length && field[next] != ',')
            {
                return null;
            }
        }
    }

    // etagc: %x21 / %x23-7E / obs-text.
    private static readonly System.Buffers.SearchValues<char> EtagChars = System.Buffers.SearchValues.Create(
        "!#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~");

    private static string Latin1(ReadOnlySpan<byte> bytes) => Encoding.Latin1.GetString(bytes);

    private static class HeaderNames
    {
        public const string IfMatch = "If-Match";
        public const string IfNoneMatch = "If-None-Match";
        public const string IfModifiedSince = "If-Modified-Since";
        public const string IfUnmodifiedSince = "If-Unmodified-Since";
        public const string IfRange = "If-Range";
    }

    internal static HeadLimits Limits(byte selector) => selector % 4 == 0
        ? new HeadLimits(new KestrelServerLimits { MaxRequestLineSize = 96, MaxRequestHeadersTotalSize = 160, MaxRequestHeaderCount = 4 })
        : Defaults.Limits;

    // Apart, so that naming a target runs none of Peregrine's code: under SharpFuzz that code is
    // instrumented and may run only once the fuzzer has set up its coverage map.
    private static class Defaults
    {
        public static readonly HeadLimits Limits = new(new KestrelServerLimits());
    }
}
