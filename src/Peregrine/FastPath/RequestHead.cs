using System.Text;

namespace Peregrine.FastPath;

/// <summary>
/// A request head the fast path can answer: GET or HEAD, HTTP/1.1, a path of plain characters
/// (no percent-encoding, no dot segments), no body, and no header whose handling needs the full
/// HTTP stack. <see cref="TryParse"/> says no to anything else, and the request goes to Kestrel
/// untouched, which then applies its own validation and limits. The fast path is therefore never
/// more permissive than Kestrel: it only skips work for requests Kestrel would accept as they are.
/// </summary>
internal ref struct RequestHead
{
    public bool IsHead;
    public bool Close;
    public ReadOnlySpan<byte> Path;
    public ReadOnlySpan<byte> AcceptEncoding;
    public ReadOnlySpan<byte> IfNoneMatch;
    public ReadOnlySpan<byte> IfModifiedSince;
    public bool HasOrigin;

    // Path characters that need no decoding or normalisation (RFC 3986 unreserved, sub-delims,
    // ':' '@' and '/'). '%' is not among them: an encoded path goes to Kestrel to be decoded.
    private static readonly bool[] s_pathChars = Table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/");

    // Query characters: visible ASCII but '#'; Kestrel hands the query on undecoded.
    private static readonly bool[] s_queryChars = Table(Enumerable.Range(0x21, 0x7E - 0x20).Select(c => (char)c).Where(c => c != '#').ToArray());

    private static readonly bool[] s_tokenChars = Table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~");

    private static readonly bool[] s_hostChars = Table("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.:[]");

    /// <summary>Parses a head that ends with its blank line (CRLF CRLF included).</summary>
    public static bool TryParse(ReadOnlySpan<byte> head, out RequestHead request)
    {
        request = default;
        var lineEnd = head.IndexOf("\r\n"u8);
        var line = head[..lineEnd];
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

        if (!line.EndsWith(" HTTP/1.1"u8))
        {
            return false;
        }

        var target = line[..^9];
        var query = target.IndexOf((byte)'?');
        var path = query < 0 ? target : target[..query];
        if (path.IsEmpty || path[0] != '/' || !All(path, s_pathChars) || path.IndexOf("/."u8) >= 0
            || (query >= 0 && !All(target[(query + 1)..], s_queryChars)))
        {
            return false;
        }

        request.Path = path;
        var hosts = 0;
        var rest = head[(lineEnd + 2)..];
        while (true)
        {
            lineEnd = rest.IndexOf("\r\n"u8);
            if (lineEnd == 0)
            {
                break;
            }

            var field = rest[..lineEnd];
            rest = rest[(lineEnd + 2)..];
            var colon = field.IndexOf((byte)':');
            if (colon <= 0 || !All(field[..colon], s_tokenChars))
            {
                // Also catches obsolete line folding: a line that starts with white space.
                return false;
            }

            var name = field[..colon];
            var value = field[(colon + 1)..].Trim(" \t"u8);
            foreach (var b in value)
            {
                if (b is < 0x20 and not (byte)'\t' or > 0x7E)
                {
                    return false;
                }
            }

            if (!Accept(ref request, name, value, ref hosts))
            {
                return false;
            }
        }

        return hosts == 1;
    }

    private static bool Accept(ref RequestHead request, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ref int hosts)
    {
        switch (name.Length)
        {
            case 4 when Ascii.EqualsIgnoreCase(name, "Host"u8):
                hosts++;
                return All(value, s_hostChars) && !value.IsEmpty;
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
                return value.SequenceEqual("0"u8);
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
        foreach (var range in value.Split((byte)','))
        {
            var token = value[range].Trim(" \t"u8);
            if (Ascii.EqualsIgnoreCase(token, "close"u8))
            {
                request.Close = true;
            }
            else if (!token.IsEmpty && !Ascii.EqualsIgnoreCase(token, "keep-alive"u8))
            {
                // "upgrade" and the like need the full stack.
                return false;
            }
        }

        return true;
    }

    private static bool All(ReadOnlySpan<byte> span, bool[] allowed)
    {
        foreach (var b in span)
        {
            if (b >= allowed.Length || !allowed[b])
            {
                return false;
            }
        }

        return true;
    }

    private static bool[] Table(IEnumerable<char> chars)
    {
        var table = new bool[128];
        foreach (var c in chars)
        {
            table[c] = true;
        }

        return table;
    }
}
