using System.Runtime.CompilerServices;
using System.Text;
using Peregrine.Syntax;

namespace Peregrine.Http1;

// A head's field lines (RFC 9112 §5, RFC 9110 §5): each name and value checked as Kestrel checks
// them, and the fields the fast path answers by remembered.
internal ref partial struct RequestHead
{
    /// <summary>
    /// RFC 9112 §5: a token, a colon, optional white space, the value, optional white space, in
    /// a line <see cref="LineEnd"/> found plain.
    /// </summary>
    private static bool Field(ref RequestHead request, ReadOnlySpan<byte> field, ref int hosts)
    {
        // Also catches obsolete line folding (RFC 9112 §5.2): a line that starts with white
        // space, which Kestrel refuses.
        var colon = Span(field, Token);
        if (colon == 0 || colon == field.Length || field[colon] != ':')
        {
            request._unlendable = true;
            return false;
        }

        // Trimmed by hand: under Native AOT, MemoryExtensions.Trim took 8% of reading a head
        // (bench/Alloc's "heads").
        var value = field[(colon + 1)..];
        var start = 0;
        while (start < value.Length && value[start] is (byte)' ' or (byte)'\t')
        {
            start++;
        }

        var stop = value.Length;
        while (stop > start && value[stop - 1] is (byte)' ' or (byte)'\t')
        {
            stop--;
        }

        value = value[start..stop];
        return Accept(ref request, field[..colon], value, ref hosts);
    }

    /// <summary>How many bytes at the start of <paramref name="run"/> are in <paramref name="class"/>.</summary>
    private static int Span(ReadOnlySpan<byte> run, byte @class)
    {
        var classes = Classes;
        var at = 0;
        while (at < run.Length && (classes[run[at]] & @class) != 0)
        {
            at++;
        }

        return at;
    }

    private static bool All(ReadOnlySpan<byte> run, byte @class) => Span(run, @class) == run.Length;

    private static bool Accept(ref RequestHead request, ReadOnlySpan<byte> name, ReadOnlySpan<byte> value, ref int hosts)
    {
        switch (name.Length)
        {
            case 4 when Is(name, "Host"u8):
                hosts++;
                return IsPlainHost(value) || Unlendable(ref request);
            case 5 when Is(name, "Range"u8):
                // One line of each, empty or not, is the fast path's to read
                // (Http1FastPath.TryRespond answers a single range and lends the rest).
                return RememberOnce(ref request.HasRange, ref request.Range, value);
            case 8 when Is(name, "If-Range"u8):
                return RememberOnce(ref request.HasIfRange, ref request.IfRange, value);
            case 8 when Is(name, "If-Match"u8):
            case 19 when Is(name, "If-Unmodified-Since"u8):
                // Kestrel's to answer; the connection may go on with the fast path after it.
                return false;
            case 6 when Is(name, "Expect"u8):
            case 7 when Is(name, "Upgrade"u8):
            case 14 when Is(name, "HTTP2-Settings"u8):
            case 17 when Is(name, "Transfer-Encoding"u8):
                return Unlendable(ref request);
            case 6 when Is(name, "Origin"u8):
                request.HasOrigin = true;
                return true;
            case 10 when Is(name, "Connection"u8):
                return Connection(ref request, value);
            case 13 when Is(name, "If-None-Match"u8):
                return Remember(ref request.IfNoneMatch, value);
            case 14 when Is(name, "Content-Length"u8):
                // Kestrel refuses a second Content-Length even when both say 0 (400).
                if (request._hasContentLength || !value.SequenceEqual("0"u8))
                {
                    return Unlendable(ref request);
                }

                request._hasContentLength = true;
                return true;
            case 15 when Is(name, "Accept-Encoding"u8):
                // An empty value still means "identity only" (RFC 9110 §12.5.3), so it is kept
                // as a single space rather than as absent.
                return Remember(ref request.AcceptEncoding, value.IsEmpty ? " "u8 : value);
            case 17 when Is(name, "If-Modified-Since"u8):
                return Remember(ref request.IfModifiedSince, value);
            default:
                return true;
        }
    }

    /// <summary>Not answerable, nor lendable: a field that changes the framing or the protocol, or one the fast path cannot read.</summary>
    private static bool Unlendable(ref RequestHead request)
    {
        request._unlendable = true;
        return false;
    }

    /// <summary>
    /// A field name is <paramref name="expected"/>, ignoring case. The first byte is compared
    /// first, inline: most names a browser sends share a length with one of those above but not
    /// their first letter.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool Is(ReadOnlySpan<byte> name, ReadOnlySpan<byte> expected)
        => ((name[0] ^ expected[0]) & ~0x20) == 0 && Ascii.EqualsIgnoreCase(name, expected);

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

    /// <summary>Keeps a field's value, empty or not, and whether it came; a second line is Kestrel's.</summary>
    private static bool RememberOnce(ref bool seen, ref ReadOnlySpan<byte> slot, ReadOnlySpan<byte> value)
    {
        if (seen)
        {
            return false;
        }

        seen = true;
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
            return Unlendable(ref request);
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
                return Unlendable(ref request);
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
        int port;
        if (value.StartsWith("["u8))
        {
            port = value.IndexOf((byte)']') + 1;
            if (HostSyntax.Classify(value) != HostForm.Accepted || port < 5 || !All(value[1..(port - 1)], Ipv6Char))
            {
                return false;
            }
        }
        else
        {
            // A name of letters, digits, '-' and '.' with a port of digits is a reg-name that
            // HostSyntax.Classify accepts as it is: no need to ask it.
            port = Span(value, HostNameChar);
            if (port == 0)
            {
                return false;
            }
        }

        return port == value.Length || (value[port] == ':' && port + 1 < value.Length && All(value[(port + 1)..], Digit));
    }
}
