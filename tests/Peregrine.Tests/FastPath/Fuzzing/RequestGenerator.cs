namespace Peregrine.Tests.FastPath.Fuzzing;

/// <summary>
/// Requests as lists of lines (request line first, no line ends), and the mutations made on
/// whole lines: duplicated, removed, re-cased or folded fields, white space moved about, odd
/// targets and versions, blank lines before the request, and lengths just either side of the
/// target's limits.
/// </summary>
internal sealed class RequestGenerator(Random random, FuzzTarget target)
{
    private static readonly string[] s_paths =
        ["/", "/index.html", "/css/site.css", "/img/a.png", "/docs/", "/docs", "/a.txt", "/missing.js", "/app/route", "/index.html?v=1", "/css/site.css?x=%20&y"];

    private static readonly string[] s_oddTargets =
        ["/%69ndex.html", "/./index.html", "/css/../index.html", "//index.html", "/index.html/", "*", "http://x/index.html", "/index.html#f",
         "/index.html?a#b", "/INDEX.HTML", "/.hidden", "/index.html;x", "/%2e%2e/a.txt", "/~x", "/a.txt?", "/index.html?\"<>", "/img/a.png?" + new string('q', 40)];

    private static readonly string[] s_hosts = ["x", "localhost", "localhost:8080", "127.0.0.1:80", "[::1]:8080", "example.com"];

    private readonly Random _random = random;
    private readonly FuzzTarget _target = target;

    public List<string> Next()
    {
        var method = _random.Next(100) switch { < 75 => "GET", < 95 => "HEAD", < 97 => "POST", < 98 => "OPTIONS", < 99 => "DELETE", _ => "get" };
        var version = _random.Next(40) == 0 ? "HTTP/1.0" : "HTTP/1.1";
        var lines = new List<string> { $"{method} {Pick(s_paths)} {version}" };
        if (_random.Next(25) != 0)
        {
            lines.Add("Host: " + Pick(s_hosts));
        }

        for (var extra = _random.Next(6); extra > 0; extra--)
        {
            lines.Insert(_random.Next(1, lines.Count + 1), Field());
        }

        return lines;
    }

    /// <summary>One mutation of a request's lines; says what it did.</summary>
    public string MutateLines(List<string> request)
    {
        var fields = request.Count - 1;
        var field = 1 + _random.Next(Math.Max(1, fields));
        switch (_random.Next(10))
        {
            case 0 when fields > 0:
                request.Insert(1 + _random.Next(fields + 1), request[field]);
                return $"duplicated line {field}";
            case 1 when fields > 0:
                request.RemoveAt(field);
                return $"removed line {field}";
            case 2:
                var line = _random.Next(request.Count);
                request[line] = ChangeCase(request[line]);
                return $"case of line {line}";
            case 3 when fields > 0:
                request.Insert(field + 1, (_random.Next(2) == 0 ? " " : "\t") + "folded");
                return $"obs-fold after line {field}";
            case 4:
                return MoveWhiteSpace(request, field);
            case 5:
                request[0] = ReplacePart(request[0], 1, Pick(s_oddTargets));
                return "odd target";
            case 6:
                request[0] = _random.Next(2) == 0
                    ? ReplacePart(request[0], 2, Pick(["HTTP/1.0", "HTTP/2.0", "HTTP/1.2", "HTTP/1.1 ", "HTTP/1", "HTTP/1.10"]))
                    : ReplacePart(request[0], 0, Pick(["PRI", "CONNECT", "TRACE", "PUT", "GET/", "HEAD\u00e9"]));
                return "odd version or method";
            case 7:
                request.Insert(0, "");
                return "blank line before";
            default:
                return NearLimit(request);
        }
    }

    // Mostly fields the fast path reads or passes over, so that most unmutated requests are its
    // own; now and then one that sends the request to Kestrel, or that Kestrel refuses.
    private string Field() => _random.Next(24) switch
    {
        0 => "Accept-Encoding: " + Pick(["br", "gzip", "br, gzip", "gzip;q=0", "identity", "", "*", "zstd, br;q=0.5", "gzip,\tbr", "br;q=0.5 , gzip ;q=0.9"]),
        1 => "If-None-Match: " + Pick([_target.Pair.ETag, "W/" + _target.Pair.ETag, "\"x\"", "*", "\"x\", " + _target.Pair.ETag, "\"x\",\t" + _target.Pair.ETag]),
        2 => "If-Modified-Since: " + Pick([_target.Pair.LastModified, "Sat, 01 Jan 2000 00:00:00 GMT", "garbage"]),
        3 => "Connection: " + Pick(["keep-alive", "close", "Close", "keep-alive, close", ", close", "upgrade", "close, ", "close,close", "te",
            "keep-alive,\tclose", "close\t", "keep-alive ,close", "CLOSE , keep-alive", "close close", "Keep-Alive"]),
        4 => "Origin: " + Pick(["https://a.example", "https://evil.example", "null"]),
        5 => "Accept: " + Pick(["text/html", "*/*", "application/json", "text/html,application/xhtml+xml"]),
        6 => "User-Agent: fuzz/1.0 (+x)",
        7 => "Cache-Control: no-cache",
        8 => "Content-Length: " + Pick(["0", "0", "00", " 0", "1"]),
        9 => Pick(["Range: bytes=0-9", "If-Range: " + _target.Pair.ETag, "If-Match: *", "Transfer-Encoding: chunked", "Expect: 100-continue", "Upgrade: websocket"]),
        10 => "Host: " + Pick([.. s_hosts, "", "x:", ":80", "[::1", "a b", "x:8o"]),
        11 or 12 => "Accept-Encoding: " + Pick(["br, gzip", "gzip, deflate, br, zstd"]),
        13 => "If-None-Match: " + _target.Pair.ETag,
        14 or 15 => "Accept: " + Pick(["*/*", "text/css,*/*;q=0.1", "image/avif,image/webp,*/*"]),
        16 => "Accept-Language: en-GB,en;q=0.9",
        17 => "Sec-Fetch-Mode: " + Pick(["navigate", "no-cors", "cors"]),
        18 => "Referer: http://x/index.html",
        _ => $"X-Fuzz-{_random.Next(100)}: {new string('v', _random.Next(30))}",
    };

    private string MoveWhiteSpace(List<string> request, int field)
    {
        var line = field < request.Count ? request[field] : request[0];
        var colon = line.IndexOf(':');
        switch (_random.Next(7))
        {
            case 0:
                request[0] = request[0].Replace(" ", "  ", StringComparison.Ordinal);
                return "double spaces in the request line";
            case 1:
                var space = request[0].IndexOf(' ', _random.Next(2) == 0 ? 0 : Math.Max(0, request[0].Length - 9));
                request[0] = space < 0 ? request[0] : request[0][..space] + "\t" + request[0][(space + 1)..];
                return "tab in the request line";
            case 2 when colon > 0 && field < request.Count:
                request[field] = line[..colon] + Pick([" ", "\t"]) + line[colon..];
                return $"white space before the colon of line {field}";
            case 3 when colon > 0 && field < request.Count:
                request[field] = line[..(colon + 1)] + Pick(["", "\t", "  ", " \t "]) + line[(colon + 1)..].TrimStart();
                return $"white space after the colon of line {field}";
            case 4:
                var last = _random.Next(request.Count);
                request[last] += Pick([" ", "\t", " \t"]);
                return $"trailing white space on line {last}";
            case 5:
                var first = _random.Next(request.Count);
                request[first] = Pick([" ", "\t"]) + request[first];
                return $"leading white space on line {first}";
            default:
                request[0] = " " + request[0];
                return "space before the method";
        }
    }

    /// <summary>Grows the request line, the field section or the field count to just either side of the target's limit.</summary>
    private string NearLimit(List<string> request)
    {
        var configuration = _target.Setup;
        switch (_random.Next(3))
        {
            case 0:
                // Kestrel: the request line with its CRLF within MaxRequestLineSize.
                var lineBytes = configuration.MaxRequestLineSize + _random.Next(-40, 4);
                var grow = lineBytes - (request[0].Length + 2);
                var end = request[0].LastIndexOf(' ');
                if (grow <= 0 || end <= 0)
                {
                    return "request line already past the target length";
                }

                var query = request[0].AsSpan(0, end).Contains('?') ? "" : "?";
                request[0] = request[0][..end] + query + new string('q', Math.Max(0, grow - query.Length)) + request[0][end..];
                return $"request line of {request[0].Length + 2} bytes";
            case 1:
                // Kestrel: the field lines and the blank line within MaxRequestHeadersTotalSize + 2.
                var sectionBytes = configuration.MaxRequestHeadersTotalSize + 2 + _random.Next(-40, 4);
                var pad = sectionBytes - (request.Skip(1).Sum(l => l.Length + 2) + 2) - "X-Pad: \r\n".Length;
                if (pad < 0)
                {
                    return "field section already past the target length";
                }

                request.Add("X-Pad: " + new string('p', pad));
                return $"field section of {sectionBytes} bytes";
            default:
                // Kestrel: at most MaxRequestHeaderCount field lines.
                var count = configuration.MaxRequestHeaderCount + _random.Next(-2, 2);
                for (var i = request.Count - 1; i < count; i++)
                {
                    request.Add($"X-Count-{i}: {i}");
                }

                return $"{count} fields";
        }
    }

    private string ChangeCase(string line) => _random.Next(4) switch
    {
        0 => line.ToUpperInvariant(),
        1 => line.ToLowerInvariant(),
        _ when line.Length == 0 => line,
        _ => _random.Next(line.Length) is var at && char.IsLetter(line[at])
            ? line[..at] + (char.IsUpper(line[at]) ? char.ToLowerInvariant(line[at]) : char.ToUpperInvariant(line[at])) + line[(at + 1)..]
            : line,
    };

    /// <summary>Replaces the method (0), target (1) or version (2) of a request line split at its first and last space.</summary>
    private static string ReplacePart(string line, int part, string with)
    {
        var first = line.IndexOf(' ');
        var last = line.LastIndexOf(' ');
        if (first < 0 || last <= first)
        {
            return line;
        }

        return part switch
        {
            0 => with + line[first..],
            1 => line[..(first + 1)] + with + line[last..],
            _ => line[..(last + 1)] + with,
        };
    }

    private string Pick(string[] choices) => choices[_random.Next(choices.Length)];
}
