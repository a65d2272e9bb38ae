using System.Diagnostics;
using System.Text;
using System.Text.RegularExpressions;
using Peregrine.Http1;

namespace Peregrine.Tests.Fuzzing;

// The fast path's request-head framing and parsing, and the linear-time property every target checks.
public static partial class ParserTargets
{
    private static void RequestHeadTarget(byte[] input)
    {
        if (input.Length == 0)
        {
            return;
        }

        // First byte: which limits (Kestrel's defaults, or small ones that the input can reach).
        var limits = Limits(input[0]);
        var buffer = input.AsSpan(1);
        var framing = RequestHead.Find(buffer, limits, out var length, out var request);
        Check(framing == HeadFraming.Complete ? length > 0 && length <= buffer.Length : length == 0, "a length only for a complete head, within the buffer", input);

        // The fast path's verdict is decided by the bytes seen: what it decided on a prefix, it
        // decides the same way on the whole (it frames a head arriving in pieces one prefix at
        // a time, and hands off or answers as soon as it can).
        var verdict = Verdict(buffer, limits);
        for (var piece = 1; piece < 8; piece++)
        {
            var early = Verdict(buffer[..(buffer.Length * piece / 8)], limits);
            Check(early == -1 || early == verdict, $"a prefix's verdict ({early}) holds for the whole ({verdict})", input);
        }

        if (framing == HeadFraming.Complete)
        {
            var head = buffer[..length];
            Check(head.EndsWith("\r\n\r\n"u8), "a complete head ends with its blank line", input);
            Check(RequestHead.Find(head, limits, out var again, out var alone) == HeadFraming.Complete && again == length, "the head alone frames the same", input);
            Check(alone.IsAnswerable == request.IsAnswerable && alone.Path.SequenceEqual(request.Path), "the head alone reads the same", input);
            for (var i = 0; i < head.Length; i++)
            {
                Check(head[i] != 0 && (head[i] != '\r' || head[i + 1] == '\n') && (head[i] != '\n' || (i > 0 && head[i - 1] == '\r')), "a complete head has CRLF line ends only, and no NUL", input);
            }

            if (request.IsAnswerable)
            {
                CheckGrammar(Encoding.Latin1.GetString(head), request.Path, request.IsHead, request.Http10, request.Close, input);
            }
        }

        LinearBytes(input, static pattern =>
        {
            var limits = new HeadLimits(new Microsoft.AspNetCore.Server.Kestrel.Core.KestrelServerLimits { MaxRequestLineSize = 1 << 20, MaxRequestHeadersTotalSize = 1 << 20, MaxRequestHeaderCount = 1 << 20 });
            RequestHead.Find(pattern, limits, out _, out _);
        });
    }

    /// <summary>The fast path's verdict on a buffer: the length of the head it answers, 0 to hand off, -1 to wait for more.</summary>
    private static int Verdict(ReadOnlySpan<byte> buffer, in HeadLimits limits) => RequestHead.Find(buffer, limits, out var length, out var request) switch
    {
        HeadFraming.Complete => request.IsAnswerable ? length : 0,
        HeadFraming.Incomplete => -1,
        _ => 0,
    };

    /// <summary>
    /// A head the fast path answers must be one the request grammar (RFC 9112 §3, §5; RFC 9110
    /// §5.6.2, §7.2) and Kestrel accept as it is: the fast path is never more permissive.
    /// </summary>
    private static void CheckGrammar(string head, ReadOnlySpan<byte> path, bool isHead, bool http10, bool close, byte[] input)
    {
        var lines = head[..^4].Split("\r\n");
        var line = RequestLineGrammar().Match(lines[0]);
        Check(line.Success, "an answered request line is GET or HEAD, an origin-form target of plain characters, HTTP/1.1 or HTTP/1.0", input);
        var target = line.Groups["path"].Value;
        Check(!DotSegment().IsMatch(target), "an answered path has no dot segments", input);
        Check(Encoding.Latin1.GetString(path) == target, "the path read is the target's path", input);
        Check(isHead == (line.Groups["method"].Value == "HEAD"), "HEAD is HEAD", input);
        Check(http10 == (line.Groups["minor"].Value == "0"), "HTTP/1.0 is HTTP/1.0", input);

        var hosts = 0;
        var contentLengths = 0;
        var ranges = 0;
        var ifRanges = 0;
        var closing = false;
        foreach (var field in lines.Skip(1))
        {
            var match = FieldGrammar().Match(field);
            Check(match.Success, "an answered field line is token ':' OWS visible text OWS", input);
            var name = match.Groups["name"].Value.ToLowerInvariant();
            var value = match.Groups["value"].Value;
            Check(name is not ("transfer-encoding" or "upgrade" or "expect" or "if-match" or "if-unmodified-since"), "no field that needs the full stack", input);
            hosts += name == "host" ? 1 : 0;
            ranges += name == "range" ? 1 : 0;
            ifRanges += name == "if-range" ? 1 : 0;
            if (name == "host")
            {
                Check(HostGrammar().IsMatch(value), "Host is a host name or IPv6 literal with an optional port", input);
            }

            if (name == "content-length")
            {
                contentLengths++;
                Check(value == "0", "no body", input);
            }

            if (name == "connection")
            {
                closing |= value.Split(',').Any(o => o.Trim(' ').Equals("close", StringComparison.OrdinalIgnoreCase));
            }
        }

        Check(hosts == 1, "exactly one Host", input);
        Check(contentLengths <= 1, "at most one Content-Length", input);
        Check(ranges <= 1 && ifRanges <= 1, "at most one Range and one If-Range (the fast path reads one line of each)", input);
        Check(close == closing, "Connection: close is read as Kestrel reads it", input);
    }

    [GeneratedRegex(@"^(?<method>GET|HEAD) (?<path>/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)(\?[!-~-[#]]*)? HTTP/1\.(?<minor>[01])$", RegexOptions.CultureInvariant)]
    private static partial Regex RequestLineGrammar();

    [GeneratedRegex(@"/\.\.?(/|$)", RegexOptions.CultureInvariant)]
    private static partial Regex DotSegment();

    [GeneratedRegex(@"^(?<name>[!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*(?<value>([!-~]([ \t!-~]*[!-~])?)?)[ \t]*$", RegexOptions.CultureInvariant)]
    private static partial Regex FieldGrammar();

    [GeneratedRegex(@"^([A-Za-z0-9\-.]+|\[[0-9A-Fa-f:.]{3,}\])(:[0-9]+)?$", RegexOptions.CultureInvariant)]
    private static partial Regex HostGrammar();

    // ---- Linear time ----

    // Pattern sizes compared: a parser linear in its input takes about four times as long for
    // the longer; a quadratic one sixteen. The bound sits between, with an absolute allowance
    // for timer resolution and a loaded machine, and a violation must repeat before it counts.
    private const int ShortInput = 2048;
    private const double RatioBound = 10;
    private static readonly TimeSpan Allowance = TimeSpan.FromMilliseconds(2);

    private static void Linear(byte[] input, Action<string> parse)
        => LinearCore(input, n => Encoding.Latin1.GetString(Repeat(input, n)), parse);

    private static void LinearBytes(byte[] input, Action<byte[]> parse)
        => LinearCore(input, n => Repeat(input, n), parse);

    private static void LinearCore<T>(byte[] input, Func<int, T> build, Action<T> parse)
    {
        if (input.Length == 0)
        {
            return;
        }

        var small = build(ShortInput);
        var large = build(4 * ShortInput);
        for (var attempt = 0; ; attempt++)
        {
            var ts = Time(parse, small);
            var tl = Time(parse, large);
            if (tl <= ts * RatioBound + Allowance)
            {
                return;
            }

            Check(attempt < 3, $"work is linear in the input's length ({ts.TotalMicroseconds:F0} us for {ShortInput} bytes, {tl.TotalMicroseconds:F0} us for {4 * ShortInput})", input);
        }
    }

    private static TimeSpan Time<T>(Action<T> parse, T value)
    {
        var best = TimeSpan.MaxValue;
        for (var i = 0; i < 3; i++)
        {
            var start = Stopwatch.GetTimestamp();
            parse(value);
            var elapsed = Stopwatch.GetElapsedTime(start);
            best = elapsed < best ? elapsed : best;
        }

        return best;
    }

    private static byte[] Repeat(byte[] pattern, int length)
    {
        var result = new byte[length];
        for (var at = 0; at < length; at += pattern.Length)
        {
            pattern.AsSpan(0, Math.Min(pattern.Length, length - at)).CopyTo(result.AsSpan(at));
        }

        return result;
    }
}
