namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// Requests as lists of lines (request line first, no line ends), and the mutations made on
/// whole lines: duplicated, removed, re-cased or folded fields, white space moved about, odd
/// targets and versions, blank lines before the request, and lengths just either side of the
/// target's limits. Hosts and targets include the forms RFC 9110/9112 decide on where Kestrel
/// alone would not (Syntax.RequestChecks, FastPath.KestrelFront): IPv6 literals valid and not,
/// IPvFuture, an empty port, characters a host may not have; absolute-form targets whose
/// authority matches the Host or not; CONNECT in each of its forms.
/// </summary>
internal sealed class RequestGenerator(Random random, FuzzTarget target)
{
    private static readonly string[] s_paths =
        ["/", "/index.html", "/css/site.css", "/img/a.png", "/img/b.png", "/docs/", "/docs", "/a.txt", "/missing.js", "/app/route", "/index.html?v=1", "/css/site.css?x=%20&y",
         .. FuzzTarget.ScriptPaths, .. FuzzTarget.ScriptPaths, "/js/app.000000000abc.js"];

    private static readonly string[] s_oddTargets =
        ["/%69ndex.html", "/./index.html", "/css/../index.html", "//index.html", "/index.html/", "*", "http://x/index.html", "/index.html#f",
         "/index.html?a#b", "/INDEX.HTML", "/.hidden", "/index.html;x", "/%2e%2e/a.txt", "/~x", "/a.txt?", "/index.html?\"<>", "/img/a.png?" + new string('q', 40),
         "/a/b%", "/a/b%1", "/a%zz.txt", "/a\u0001b", "/index.html\u007f", "/index.html?q=100%", "/index.html?a\u0002"];

    private static readonly string[] s_hosts = ["x", "localhost", "localhost:8080", "127.0.0.1:80", "[::1]:8080", "example.com"];

    // Host forms RFC 3986 and Kestrel disagree on, or that only RFC 3986 refuses.
    private static readonly string[] s_rareHosts =
        ["[2001:db8::7]:8080", "[::ffff:192.0.2.1]", "[1:2:3:4:5:6:7:8]", "[::]", "example.com:", "[::1]:", "x:", "[v7.abc]", "[V1F.a:b+c]:80", "[v7.abc]:",
         "a*b", "a+b,c;d=e", "a%41b", "a%41b:8080", "[ab..cd::ef98:0:7654:321]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[::ffff:192.0.2.256]", "[12345::]",
         "[v7.]", "[vg.a]", "[v7.a/b]", "a%4", "a%zz", "a/b", "a@b", "a_b!~", "caf\u00e9", "[::1]x", ":80", "x:80:80"];

    // Authorities for absolute-form targets and CONNECT, matching one of the hosts above or not.
    private static readonly string[] s_authorities = ["x", "example.com", "localhost:8080", "[::1]:8080", "example.com:", "[v7.abc]", "other.example:443", "127.0.0.1:80"];

    private readonly Random _random = random;
    private readonly FuzzTarget _target = target;

    public List<string> Next()
    {
        var method = _random.Next(100) switch { < 75 => "GET", < 95 => "HEAD", < 97 => "POST", < 98 => "OPTIONS", < 99 => "DELETE", _ => "get" };
        // HTTP/1.0 one time in eight: the fast path answers it too, keeping the connection
        // only on keep-alive.
        var version = _random.Next(8) == 0 ? "HTTP/1.0" : "HTTP/1.1";
        var lines = new List<string> { $"{method} {Pick(s_paths)} {version}" };
        if (_random.Next(25) != 0)
        {
            lines.Add("Host: " + (_random.Next(8) == 0 ? Pick(s_rareHosts) : Pick(s_hosts)));
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
        switch (_random.Next(12))
        {
            case 10:
                return AbsoluteForm(request);
            case 11:
                return Connect(request);
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
    // own; now and then one that sends the request to Kestrel, or that Kestrel refuses. The
    // dictionary fields (RFC 9842) name a kept build of the script, another file's hash, or none
    // well formed, with the codings and Fetch metadata a browser sends or does not.
    private string Field() => _random.Next(28) switch
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
        10 => "Host: " + Pick([.. s_hosts, .. s_rareHosts, "", "x:", ":80", "[::1", "a b", "x:8o"]),
        11 or 12 => "Accept-Encoding: " + Pick(["br, gzip", "gzip, deflate, br, zstd"]),
        13 => "If-None-Match: " + _target.Pair.ETag,
        14 or 15 => "Accept: " + Pick(["*/*", "text/css,*/*;q=0.1", "image/avif,image/webp,*/*"]),
        16 => "Accept-Language: en-GB,en;q=0.9",
        17 => "Sec-Fetch-Mode: " + Pick(["navigate", "no-cors", "cors"]),
        18 => "Referer: http://x/index.html",
        20 => "If-Range: " + Pick([_target.Pair.ETag, "W/" + _target.Pair.ETag, "\"x\"", _target.Pair.LastModified, "Sat, 01 Jan 2000 00:00:00 GMT", ""]),
        19 => "Range: " + Pick(["bytes=0-9", "bytes=-100", "bytes=100-", "bytes=0-", "bytes=5-5", "bytes=0-9,20-29", "bytes=0-0,-1", "bytes=99999-",
            "bytes=9-0", "items=0-9", "", "bytes=0-9, 500-999", "BYTES = 0-9", "bytes=-0", "bytes=1-2,999999-", "bytes=0-9\t"]),
        21 or 22 => "Available-Dictionary: " + Pick([.. FuzzTarget.ScriptHashes, .. FuzzTarget.ScriptHashes, ":" + new string('A', 43) + "=:", "garbage", "",
            FuzzTarget.ScriptHashes[0].Trim(':'), FuzzTarget.ScriptHashes[0] + ", " + FuzzTarget.ScriptHashes[1], ":" + new string('A', 20) + ":"]),
        23 => "Accept-Encoding: " + Pick(["gzip, deflate, br, zstd, dcb, dcz", "gzip, deflate, br, zstd, dcb, dcz", "dcz", "dcb", "dcz;q=0, br", "br, dcz;q=0.5", "*", "DCZ"]),
        24 => "Sec-Fetch-Site: " + Pick(["same-origin", "cross-site", "same-site", "none", "Same-Origin"]),
        _ => $"X-Fuzz-{_random.Next(100)}: {new string('v', _random.Next(30))}",
    };

    /// <summary>The target in absolute-form, with the authority of the request's Host (when it has one) or another.</summary>
    private string AbsoluteForm(List<string> request)
    {
        var host = request.Skip(1).FirstOrDefault(l => l.StartsWith("Host:", StringComparison.OrdinalIgnoreCase))?[5..].Trim();
        var authority = host is not null && _random.Next(2) == 0 ? host : Pick(s_authorities);
        var scheme = _random.Next(4) == 0 ? "https" : "http";
        var path = Pick([.. s_paths, "", "/a/b%", "/index.html#f", "?q"]);
        request[0] = ReplacePart(request[0], 1, $"{scheme}://{authority}{path}");
        return $"absolute-form target, authority {(authority == host ? "the Host's" : authority)}";
    }

    /// <summary>CONNECT with an authority-form target (its Host the same or not), or with a target of another form.</summary>
    private string Connect(List<string> request)
    {
        var target = Pick([.. s_authorities, "/", "/index.html", "*", "host", "http://x/", ":443", "[::1]", "a b:1"]);
        request[0] = $"CONNECT {target} " + Pick(["HTTP/1.1", "HTTP/1.1", "HTTP/1.0"]);
        if (_random.Next(2) == 0)
        {
            var host = request.FindIndex(1, l => l.StartsWith("Host:", StringComparison.OrdinalIgnoreCase));
            if (host > 0)
            {
                request[host] = "Host: " + target;
            }
        }

        return $"CONNECT {target}";
    }

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
