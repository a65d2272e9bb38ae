using System.Buffers;
using System.Text;
using Peregrine.Syntax;

namespace Peregrine.FastPath;

/// <summary>What <see cref="RequestHead.Find"/> made of the bytes at the start of a buffer.</summary>
internal enum HeadFraming : byte
{
    /// <summary>A whole head in canonical framing, within the limits, ending with its blank line.</summary>
    Complete,

    /// <summary>No blank line yet, and nothing in what has arrived rules the fast path out.</summary>
    Incomplete,

    /// <summary>
    /// Kestrel's to answer: a bare CR or LF, a NUL, a limit reached or nearly reached, or a
    /// complete line the fast path would not answer. Kestrel may accept it (it takes a bare LF as
    /// a line end) or refuse it with its own status.
    /// </summary>
    HandOff,
}

/// <summary>
/// A request head the fast path can answer: GET or HEAD, HTTP/1.1 or HTTP/1.0, a path of plain
/// characters (no percent-encoding, no dot segments), no body, and no header whose handling needs
/// the full HTTP stack. <see cref="Find"/> frames it and <see cref="TryParse"/> reads it; both say no to
/// anything else, and the request goes to Kestrel untouched, which then applies its own
/// validation and limits. The fast path is therefore never more permissive than Kestrel: it
/// only skips work for requests Kestrel would accept as they are.
/// </summary>
internal ref struct RequestHead
{
    public bool IsHead;

    /// <summary>The request line says HTTP/1.0.</summary>
    public bool Http10;

    /// <summary>Connection has the close option.</summary>
    public bool Close;

    /// <summary>Connection has the keep-alive option, which HTTP/1.0 needs to keep the connection (RFC 9112 §9.3).</summary>
    public bool KeepAlive;

    public ReadOnlySpan<byte> Path;
    public ReadOnlySpan<byte> AcceptEncoding;
    public ReadOnlySpan<byte> IfNoneMatch;
    public ReadOnlySpan<byte> IfModifiedSince;
    public bool HasOrigin;
    private bool _hasContentLength;

    // The bytes that end or break a line. Kestrel ends a line at a bare LF too, and at a NUL in
    // the request line refuses it at once (HttpParser.ParseRequestLine): the fast path frames
    // only CRLF, and hands off the moment it sees any of the three elsewhere.
    private static readonly SearchValues<byte> s_lineBreaks = SearchValues.Create("\r\n\0"u8);

    // Path characters that need no decoding or normalisation (RFC 3986 unreserved, sub-delims,
    // ':' '@' and '/'). '%' is not among them: an encoded path goes to Kestrel to be decoded.
    private static readonly SearchValues<byte> s_pathChars = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/"u8);

    // Query characters: visible ASCII but '#'; Kestrel hands the query on undecoded.
    private static readonly SearchValues<byte> s_queryChars = SearchValues.Create("!\"$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"u8);

    // RFC 9110 §5.6.2 tchar.
    private static readonly SearchValues<byte> s_tokenChars = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"u8);

    // RFC 9110 §5.5 field-vchar, SP and HTAB. Kestrel also takes UTF-8 and obs-text; those go to it.
    private static readonly SearchValues<byte> s_fieldChars = SearchValues.Create("\t !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"u8);

    // A subset of the host names Kestrel accepts (HttpCharacters allows "!$&'()-._~" too), and
    // the characters of an IPv6 literal as HttpUtilities.IsHostHeaderValid checks them.
    private static readonly SearchValues<byte> s_hostNameChars = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-."u8);
    private static readonly SearchValues<byte> s_ipv6Chars = SearchValues.Create("ABCDEFabcdef0123456789:."u8);
    private static readonly SearchValues<byte> s_digits = SearchValues.Create("0123456789"u8);

    /// <summary>
    /// Frames the head at the start of <paramref name="buffer"/>: one vectorised search per line
    /// for the next CR, LF or NUL, each CR followed by its LF, the lines within
    /// <paramref name="limits"/>, up to the blank line. A head that is not complete yet has its
    /// complete lines checked too, so that one Kestrel would refuse now is handed off now
    /// rather than waited on; but for a connection's <paramref name="first"/> head, one that
    /// <see cref="KestrelFront"/> decides on whole is waited on. <paramref name="length"/> is the
    /// head's length, blank line included, when it is complete.
    /// </summary>
    public static HeadFraming Find(ReadOnlySpan<byte> buffer, in HeadLimits limits, out int length, bool first = false)
    {
        length = 0;
        var end = LineEnd(buffer, limits.RequestLine, out var framing);
        if (end <= 0)
        {
            // end == 0: a blank line before the request. Kestrel skips those; the fast path
            // leaves them to it.
            return end == 0 ? HeadFraming.HandOff : Unfinished(buffer, 0, framing, first);
        }

        var at = end + 2;
        var budget = limits.HeaderBytes;
        var fields = 0;
        while (true)
        {
            end = LineEnd(buffer[at..], budget, out framing);
            if (end < 0)
            {
                return Unfinished(buffer, at, framing, first);
            }

            at += end + 2;
            if (end == 0)
            {
                length = at;
                return HeadFraming.Complete;
            }

            if (++fields > limits.HeaderCount)
            {
                return HeadFraming.HandOff;
            }

            budget -= end + 2;
        }
    }

    /// <summary>Reads a head that ends with its blank line (CRLF CRLF included).</summary>
    public static bool TryParse(ReadOnlySpan<byte> head, out RequestHead request) => Parse(head, whole: true, out request);

    /// <summary>
    /// The index of the CR that ends the first line of <paramref name="rest"/>, when that line
    /// and its LF fit in <paramref name="budget"/> bytes. Otherwise -1, and
    /// <see cref="HeadFraming.Incomplete"/> if more bytes could still end it within the budget.
    /// </summary>
    private static int LineEnd(ReadOnlySpan<byte> rest, int budget, out HeadFraming framing)
    {
        var window = rest.Length > budget ? rest[..budget] : rest;
        var at = window.IndexOfAny(s_lineBreaks);
        if (at >= 0 && window[at] == '\r' && at + 1 < window.Length)
        {
            framing = window[at + 1] == '\n' ? HeadFraming.Complete : HeadFraming.HandOff;
            return framing == HeadFraming.Complete ? at : -1;
        }

        // A bare LF or a NUL; or no line end, or a CR still waiting for its LF, with the budget
        // spent (the line is at or near Kestrel's limit) or not.
        framing = (at >= 0 && window[at] != '\r') || window.Length == budget ? HeadFraming.HandOff : HeadFraming.Incomplete;
        return -1;
    }

    /// <summary>An unfinished head waits for more only while its complete lines are ones the fast path answers.</summary>
    private static HeadFraming Unfinished(ReadOnlySpan<byte> buffer, int complete, HeadFraming framing, bool first)
        => framing == HeadFraming.Incomplete && !Parse(buffer[..complete], whole: false, out _) && !(first && KestrelFront.NeedsWhole(buffer[..complete]))
            ? HeadFraming.HandOff
            : framing;

    /// <summary>
    /// Reads a head: one that ends with its blank line when <paramref name="whole"/>, otherwise
    /// the complete lines of one still arriving.
    /// </summary>
    private static bool Parse(ReadOnlySpan<byte> head, bool whole, out RequestHead request)
    {
        request = default;
        var lineEnd = head.IndexOf("\r\n"u8);
        if (lineEnd < 0)
        {
            return !whole;
        }

        if (!RequestLine(ref request, head[..lineEnd]))
        {
            return false;
        }

        var hosts = 0;
        var rest = head[(lineEnd + 2)..];
        while ((lineEnd = rest.IndexOf("\r\n"u8)) > 0)
        {
            if (!Field(ref request, rest[..lineEnd], ref hosts))
            {
                return false;
            }

            rest = rest[(lineEnd + 2)..];
        }

        // RFC 9112 §3.2: exactly one Host (Kestrel refuses none or two with a 400).
        return whole ? lineEnd == 0 && hosts == 1 : true;
    }

    /// <summary>RFC 9112 §3: <c>GET</c> or <c>HEAD</c>, one SP, an origin-form target, one SP, <c>HTTP/1.1</c> or <c>HTTP/1.0</c>.</summary>
    private static bool RequestLine(ref RequestHead request, ReadOnlySpan<byte> line)
    {
        if (line.StartsWith("GET "u8))
        {
            line = line[4..];
        }
        else if (line.StartsWith("HEAD "u8))
        {
            request.IsHead = true;
            line = line[5..];
        }
        else
        {
            return false;
        }

        if (line.EndsWith(" HTTP/1.0"u8))
        {
            // RFC 9112 §2.3: Kestrel answers HTTP/1.0 with an HTTP/1.1 response, and so does
            // the fast path (Http1FastPath.TryRespond: the connection options differ).
            request.Http10 = true;
        }
        else if (!line.EndsWith(" HTTP/1.1"u8))
        {
            return false;
        }

        var target = line[..^9];
        var query = target.IndexOf((byte)'?');
        var path = query < 0 ? target : target[..query];
        if (path.IsEmpty || path[0] != '/' || path.ContainsAnyExcept(s_pathChars) || path.IndexOf("/."u8) >= 0
            || (query >= 0 && target[(query + 1)..].ContainsAnyExcept(s_queryChars)))
        {
            return false;
        }

        request.Path = path;
        return true;
    }

    /// <summary>RFC 9112 §5: a token, a colon, optional white space, the value, optional white space.</summary>
    private static bool Field(ref RequestHead request, ReadOnlySpan<byte> field, ref int hosts)
    {
        var colon = field.IndexOf((byte)':');
        if (colon <= 0 || field[..colon].ContainsAnyExcept(s_tokenChars))
        {
            // Also catches obsolete line folding (RFC 9112 §5.2): a line that starts with white
            // space, which Kestrel refuses.
            return false;
        }

        var value = field[(colon + 1)..].Trim(" \t"u8);
        return !value.ContainsAnyExcept(s_fieldChars) && Accept(ref request, field[..colon], value, ref hosts);
    }

    private static bool Accept(ref RequestHead request, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ref int hosts)
    {
        switch (name.Length)
        {
            case 4 when Ascii.EqualsIgnoreCase(name, "Host"u8):
                hosts++;
                return IsPlainHost(value);
            case 5 when Ascii.EqualsIgnoreCase(name, "Range"u8):
            case 6 when Ascii.EqualsIgnoreCase(name, "Expect"u8):
            case 7 when Ascii.EqualsIgnoreCase(name, "Upgrade"u8):
            case 8 when Ascii.EqualsIgnoreCase(name, "If-Match"u8) || Ascii.EqualsIgnoreCase(name, "If-Range"u8):
            case 14 when Ascii.EqualsIgnoreCase(name, "HTTP2-Settings"u8):
            case 17 when Ascii.EqualsIgnoreCase(name, "Transfer-Encoding"u8):
            case 19 when Ascii.EqualsIgnoreCase(name, "If-Unmodified-Since"u8):
                return false;
            case 6 when Ascii.EqualsIgnoreCase(name, "Origin"u8):
                request.HasOrigin = true;
                return true;
            case 10 when Ascii.EqualsIgnoreCase(name, "Connection"u8):
                return Connection(ref request, value);
            case 13 when Ascii.EqualsIgnoreCase(name, "If-None-Match"u8):
                return Remember(ref request.IfNoneMatch, value);
            case 14 when Ascii.EqualsIgnoreCase(name, "Content-Length"u8):
                // Kestrel refuses a second Content-Length even when both say 0 (400).
                if (request._hasContentLength || !value.SequenceEqual("0"u8))
                {
                    return false;
                }

                request._hasContentLength = true;
                return true;
            case 15 when Ascii.EqualsIgnoreCase(name, "Accept-Encoding"u8):
                // An empty value still means "identity only" (RFC 9110 §12.5.3), so it is kept
                // as a single space rather than as absent.
                return Remember(ref request.AcceptEncoding, value.IsEmpty ? " "u8 : value);
            case 17 when Ascii.EqualsIgnoreCase(name, "If-Modified-Since"u8):
                return Remember(ref request.IfModifiedSince, value);
            default:
                return true;
        }
    }

    /// <summary>Keeps a field's value; a second line of the same field needs list handling, so no.</summary>
    private static bool Remember(ref ReadOnlySpan<byte> slot, ReadOnlySpan<byte> value)
    {
        if (!slot.IsEmpty)
        {
            return false;
        }

        slot = value;
        return true;
    }

    private static bool Connection(ref RequestHead request, ReadOnlySpan<byte> value)
    {
        // Kestrel (HttpHeaders.ParseConnection) separates options by commas and spaces only: an
        // option next to a tab is not one it recognises (keep-alive,<HTAB>close keeps the
        // connection open), so a value with a tab inside is left to it.
        if (value.Contains((byte)'\t'))
        {
            return false;
        }

        foreach (var range in value.Split((byte)','))
        {
            var token = value[range].Trim((byte)' ');
            if (Ascii.EqualsIgnoreCase(token, "close"u8))
            {
                request.Close = true;
            }
            else if (Ascii.EqualsIgnoreCase(token, "keep-alive"u8))
            {
                request.KeepAlive = true;
            }
            else if (!token.IsEmpty)
            {
                // "upgrade" and the like need the full stack.
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// RFC 9110 §7.2 as both RFC 3986 and Kestrel (HttpUtilities.IsHostHeaderValid) take it: a
    /// host name, or an IPv6 literal of at least <c>[::1]</c>, then an optional colon and at least
    /// one digit. Kestrel refuses a port alone, an empty port and an unclosed bracket with a 400;
    /// it takes a literal of IPv6 characters that is not an address, which the pipeline refuses
    /// (Syntax.RequestChecks). An empty Host, which it accepts, is handed off with anything else
    /// unusual.
    /// </summary>
    private static bool IsPlainHost(ReadOnlySpan<byte> value)
    {
        if (HostSyntax.Classify(value) != HostForm.Accepted)
        {
            return false;
        }

        int port;
        if (value.StartsWith("["u8))
        {
            port = value.IndexOf((byte)']') + 1;
            if (port < 5 || value[1..(port - 1)].ContainsAnyExcept(s_ipv6Chars))
            {
                return false;
            }
        }
        else
        {
            port = value.IndexOfAnyExcept(s_hostNameChars);
            if (port < 0)
            {
                return !value.IsEmpty;
            }

            if (port == 0)
            {
                return false;
            }
        }

        return port == value.Length || (value[port] == ':' && port + 1 < value.Length && !value[(port + 1)..].ContainsAnyExcept(s_digits));
    }
}
