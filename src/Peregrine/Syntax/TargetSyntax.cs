using System.Buffers;
using System.Numerics;

namespace Peregrine.Syntax;

/// <summary>
/// What makes a request-target invalid (RFC 9112 §3.2), as far as Peregrine refuses it with a
/// 400 (RFC 9112 §3: "SHOULD respond with a 400") where Kestrel would pass it on:
/// <list type="bullet">
/// <item>a control character (US-ASCII 0x00-0x1F, 0x7F) anywhere: no part of a URI has one
/// (RFC 3986 §2);</item>
/// <item>a '#': a fragment is never sent (RFC 9112 §3.2: the target has none; RFC 9110 §7.1);</item>
/// <item>a '%' in the path not followed by two hex digits (RFC 3986 §2.1 pct-encoded), where
/// decoding the path would have to guess.</item>
/// </list>
/// Characters RFC 3986 leaves out but browsers send unencoded in a query (<c>[]{}|\^`"&lt;&gt;</c>,
/// per the WHATWG URL standard's query percent-encode set) are let through, as Kestrel lets
/// them; so is a '%' in the query, which Peregrine never decodes.
/// </summary>
internal static class TargetSyntax
{
    private static readonly SearchValues<char> s_refusedChars = SearchValues.Create(
        "\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000A\u000B\u000C\u000D\u000E\u000F" +
        "\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017\u0018\u0019\u001A\u001B\u001C\u001D\u001E\u001F\u007F#");

    /// <summary>
    /// Whether an origin-form target (<c>/path?query</c>), or the part of an absolute-form one
    /// from its path on, is one Peregrine answers.
    /// </summary>
    public static bool IsValid<T>(ReadOnlySpan<T> target)
        where T : unmanaged, IBinaryInteger<T>
    {
        for (var i = 0; i < target.Length; i++)
        {
            var c = int.CreateTruncating(target[i]);
            if (c == '?')
            {
                return !HasRefused(target[(i + 1)..]);
            }

            if (c <= 0x7F && s_refusedChars.Contains((char)c))
            {
                return false;
            }

            if (c == '%' && (i + 2 >= target.Length || !IsHex(int.CreateTruncating(target[i + 1])) || !IsHex(int.CreateTruncating(target[i + 2]))))
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>
    /// The path and query of an absolute-form target (<c>http://host/path?query</c>), which
    /// Kestrel has already checked with <see cref="Uri.TryCreate(string, UriKind, out Uri)"/>;
    /// empty when it has none.
    /// </summary>
    public static ReadOnlySpan<char> PathOfAbsoluteForm(ReadOnlySpan<char> target)
    {
        var scheme = target.IndexOf("://");
        if (scheme < 0)
        {
            return [];
        }

        var authority = target[(scheme + 3)..];
        var end = authority.IndexOfAny('/', '?', '#');
        return end < 0 ? [] : authority[end..];
    }

    private static bool HasRefused<T>(ReadOnlySpan<T> query)
        where T : unmanaged, IBinaryInteger<T>
    {
        foreach (var unit in query)
        {
            var c = int.CreateTruncating(unit);
            if (c <= 0x7F && s_refusedChars.Contains((char)c))
            {
                return true;
            }
        }

        return false;
    }

    private static bool IsHex(int c) => (uint)(c - '0') < 10u || (uint)((c | 0x20) - 'a') < 6u;
}
