using System.Numerics;
using System.Runtime.CompilerServices;

namespace Peregrine.Syntax;

/// <summary>How a Host value stands with RFC 3986 and with Kestrel.</summary>
internal enum HostForm : byte
{
    /// <summary>Not <c>uri-host [ ":" port ]</c>: a 400 (RFC 9112 §3.2).</summary>
    Invalid,

    /// <summary>Valid, and Kestrel takes it as it is.</summary>
    Accepted,

    /// <summary>
    /// Valid, with an empty port (<c>example.com:</c>), which Kestrel refuses. The same host
    /// without the colon is equivalent (RFC 3986 §6.2.3) and Kestrel takes that.
    /// </summary>
    EmptyPort,

    /// <summary>
    /// Valid in a form Kestrel refuses whatever the port: an IPvFuture literal
    /// (<c>[v7.abc]</c>), or a reg-name with a sub-delim Kestrel leaves out (<c>*+,;=</c>) or
    /// with percent-encoding.
    /// </summary>
    Unaccepted,
}

/// <summary>
/// The Host field's syntax (RFC 9110 §7.2: <c>uri-host [ ":" port ]</c>, with RFC 3986 §3.2.2's
/// host and §3.2.3's port), and where Kestrel's own check (HttpUtilities.IsHostHeaderValid)
/// draws the line differently. Allocation-free, over bytes (the fast path's head) or chars
/// (Kestrel's header value) alike.
/// </summary>
internal static class HostSyntax
{
    // What each ASCII character is in a reg-name (RFC 3986 §3.2.2): 1, Kestrel's host
    // characters, §2.3 unreserved and the §2.2 sub-delims but for "*+,;=" (as Http.Sys);
    // 2, those five, valid but refused by Kestrel; 3, '%', which starts a pct-encoding;
    // 0, anything else. A table rather than SearchValues: one load a character, where the
    // Native AOT build made two calls (docs/performance.md, "The request path in Native AOT").
    private const byte Other = 0, KestrelHost = 1, RegNameOnly = 2, Percent = 3;

    private static ReadOnlySpan<byte> RegNameClasses =>
    [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x00-0x0F
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 0x10-0x1F
        0, 1, 0, 0, 1, 3, 1, 1, 1, 1, 2, 2, 2, 1, 1, 0, // 0x20-0x2F: !$%&'()*+,-.
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 2, 0, 2, 0, 0, // 0x30-0x3F: 0-9 ; =
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0x40-0x4F: A-O
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, // 0x50-0x5F: P-Z _
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 0x60-0x6F: a-o
        1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, // 0x70-0x7F: p-z ~
    ];

    /// <summary>Classifies a whole Host value (an empty value is valid: RFC 9112 §3.2).</summary>
    public static HostForm Classify<T>(ReadOnlySpan<T> value)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (value.IsEmpty)
        {
            return HostForm.Accepted;
        }

        var form = HostForm.Accepted;
        int end;
        if (At(value, 0) == '[')
        {
            end = IndexOf(value, ']');
            if (end < 0)
            {
                return HostForm.Invalid;
            }

            var literal = value[1..end];
            if (literal.Length > 0 && (At(literal, 0) | 0x20) == 'v')
            {
                if (!IsIPvFuture(literal))
                {
                    return HostForm.Invalid;
                }

                form = HostForm.Unaccepted;
            }
            else if (!IsIPv6(literal))
            {
                return HostForm.Invalid;
            }
            else if (end < 4)
            {
                // "[::]": Kestrel takes no literal shorter than "[::1]".
                form = HostForm.Unaccepted;
            }

            end++;
        }
        else
        {
            // RFC 9110 §4.2.1: an http URI's host is not empty, so neither is this one's
            // (Kestrel refuses ":80" too).
            end = IndexOf(value, ':');
            var name = end < 0 ? value : value[..end];
            end = end < 0 ? value.Length : end;
            if (name.IsEmpty)
            {
                return HostForm.Invalid;
            }

            var regName = RegName(name);
            if (regName == HostForm.Invalid)
            {
                return HostForm.Invalid;
            }

            form = regName;
        }

        // port = *DIGIT (RFC 3986 §3.2.3): an empty one is valid, and means the default.
        if (end == value.Length)
        {
            return form;
        }

        if (At(value, end) != ':' || !AllDigits(value[(end + 1)..]))
        {
            return HostForm.Invalid;
        }

        return end + 1 == value.Length && form == HostForm.Accepted ? HostForm.EmptyPort : form;
    }

    /// <summary>
    /// RFC 9112 §3.2.3 authority-form, CONNECT's target: <c>uri-host ":" port</c>, with a port
    /// (RFC 9110 §9.3.6: the host name and port number of the tunnel's destination).
    /// </summary>
    public static bool IsAuthorityForm<T>(ReadOnlySpan<T> target)
        where T : unmanaged, IBinaryInteger<T>
    {
        if (target.IsEmpty || Classify(target) == HostForm.Invalid)
        {
            return false;
        }

        var hostEnd = At(target, 0) == '[' ? IndexOf(target, ']') + 1 : IndexOf(target, ':');
        return hostEnd > 0 && hostEnd < target.Length - 1 && At(target, hostEnd) == ':';
    }

    private static HostForm RegName<T>(ReadOnlySpan<T> name)
        where T : unmanaged, IBinaryInteger<T>
    {
        var form = HostForm.Accepted;
        for (var i = 0; i < name.Length; i++)
        {
            switch (Class(At(name, i)))
            {
                case KestrelHost:
                    break;
                case RegNameOnly:
                    form = HostForm.Unaccepted;
                    break;
                case Percent:
                    // pct-encoded = "%" HEXDIG HEXDIG
                    if (i + 2 >= name.Length || !IsHex(At(name, i + 1)) || !IsHex(At(name, i + 2)))
                    {
                        return HostForm.Invalid;
                    }

                    form = HostForm.Unaccepted;
                    i += 2;
                    break;
                default:
                    return HostForm.Invalid;
            }
        }

        return form;
    }

    /// <summary>RFC 3986 §3.2.2: <c>"v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )</c>.</summary>
    private static bool IsIPvFuture<T>(ReadOnlySpan<T> literal)
        where T : unmanaged, IBinaryInteger<T>
    {
        var dot = IndexOf(literal, '.');
        if (dot < 2 || dot + 1 == literal.Length)
        {
            return false;
        }

        for (var i = 1; i < dot; i++)
        {
            if (!IsHex(At(literal, i)))
            {
                return false;
            }
        }

        for (var i = dot + 1; i < literal.Length; i++)
        {
            var c = At(literal, i);
            if (c != ':' && Class(c) is not (KestrelHost or RegNameOnly))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// RFC 3986 §3.2.2 IPv6address: eight 16-bit pieces of one to four hex digits, the last two
    /// of which may be written as an IPv4address; or fewer with one "::" standing for the rest.
    /// </summary>
    private static bool IsIPv6<T>(ReadOnlySpan<T> s)
        where T : unmanaged, IBinaryInteger<T>
    {
        var i = 0;
        var pieces = 0;
        var compressed = false;
        if (s.Length >= 2 && At(s, 0) == ':' && At(s, 1) == ':')
        {
            compressed = true;
            i = 2;
            if (i == s.Length)
            {
                return true;
            }
        }

        while (true)
        {
            var start = i;
            while (i < s.Length && i - start < 4 && IsHex(At(s, i)))
            {
                i++;
            }

            if (i < s.Length && At(s, i) == '.')
            {
                // ls32 as an IPv4address: the last thing in the literal.
                if (!IsIPv4(s[start..]))
                {
                    return false;
                }

                pieces += 2;
                break;
            }

            if (i == start)
            {
                return false;
            }

            pieces++;
            if (i == s.Length)
            {
                break;
            }

            if (At(s, i) != ':' || ++i == s.Length)
            {
                // Something else after a piece, or a single colon at the end.
                return false;
            }

            if (At(s, i) == ':')
            {
                if (compressed)
                {
                    return false;
                }

                compressed = true;
                if (++i == s.Length)
                {
                    break;
                }
            }
        }

        return compressed ? pieces <= 7 : pieces == 8;
    }

    /// <summary>RFC 3986 §3.2.2 IPv4address: four dec-octets, 0 to 255 without leading zeros.</summary>
    private static bool IsIPv4<T>(ReadOnlySpan<T> s)
        where T : unmanaged, IBinaryInteger<T>
    {
        var octets = 0;
        var i = 0;
        while (true)
        {
            var start = i;
            var number = 0;
            while (i < s.Length && i - start < 3 && IsDigit(At(s, i)))
            {
                number = (number * 10) + (At(s, i) - '0');
                i++;
            }

            if (i == start || number > 255 || (i - start > 1 && At(s, start) == '0'))
            {
                return false;
            }

            if (++octets == 4)
            {
                return i == s.Length;
            }

            if (i == s.Length || At(s, i) != '.')
            {
                return false;
            }

            i++;
        }
    }

    private static bool AllDigits<T>(ReadOnlySpan<T> s)
        where T : unmanaged, IBinaryInteger<T>
    {
        foreach (var c in s)
        {
            if (!IsDigit(int.CreateTruncating(c)))
            {
                return false;
            }
        }

        return true;
    }

    private static int At<T>(ReadOnlySpan<T> s, int i)
        where T : unmanaged, IBinaryInteger<T>
        => int.CreateTruncating(s[i]);

    private static int IndexOf<T>(ReadOnlySpan<T> s, char c)
        where T : unmanaged, IBinaryInteger<T>
        => s.IndexOf(T.CreateTruncating(c));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static byte Class(int c) => (uint)c < (uint)RegNameClasses.Length ? RegNameClasses[c] : Other;

    private static bool IsDigit(int c) => (uint)(c - '0') < 10u;

    private static bool IsHex(int c) => IsDigit(c) || (uint)((c | 0x20) - 'a') < 6u;
}
