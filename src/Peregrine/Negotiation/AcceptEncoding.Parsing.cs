using System.Buffers;

namespace Peregrine.Negotiation;

/// <summary>
/// Reading the field value into a weight for each coding (RFC 9110 §12.5.3, §12.4.2, §5.6).
/// The parser is one forward pass over the field value: every character is looked at a bounded
/// number of times, nothing is split into arrays and nothing is allocated, so a hostile header of
/// any size costs time linear in its length and no memory. Kestrel's request header limits bound
/// that length; this code does not rely on them.
/// </summary>
internal static partial class AcceptEncoding
{
    // tchar, RFC 9110 §5.6.2.
    private static readonly SearchValues<char> TokenChars =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    private static readonly SearchValues<char> CommaOrQuote = SearchValues.Create(",\"");

    private static void ParseLine(ReadOnlySpan<char> line, Span<int> weights, bool asStated = false)
    {
        while (!line.IsEmpty)
        {
            var end = ElementEnd(line);
            ParseElement(line[..end], weights, asStated);
            line = end < line.Length ? line[(end + 1)..] : default;
        }
    }

    // The index of the comma that ends the first element, or line.Length. A comma inside a
    // quoted-string (a parameter value, §5.6.4) does not end the element. An unterminated
    // quoted-string runs to the end of the line; that element is then malformed and ignored, and the
    // damage stops at the line, since each field line is scanned on its own.
    private static int ElementEnd(ReadOnlySpan<char> line)
    {
        var i = 0;
        while (true)
        {
            var next = line[i..].IndexOfAny(CommaOrQuote);
            if (next < 0)
            {
                return line.Length;
            }

            i += next;
            if (line[i] == ',')
            {
                return i;
            }

            // A comma inside a quoted-string does not end the element; an unclosed one runs to the end.
            var quoted = QuotedStringLength(line[i..]);
            if (quoted < 0)
            {
                return line.Length;
            }

            i += quoted;
        }
    }

    // codings [ weight ], RFC 9110 §12.5.3, with weight = OWS ";" OWS "q=" qvalue (§12.4.2).
    // Other parameters are accepted and ignored. Whitespace around "=" is tolerated although the
    // grammar has none there, because it changes nothing about what the client meant.
    private static void ParseElement(ReadOnlySpan<char> element, Span<int> weights, bool asStated)
    {
        element = TrimOws(element);
        var nameLength = TokenLength(element);
        if (nameLength == 0)
        {
            return;
        }

        var name = element[..nameLength];
        var rest = element[nameLength..];
        var weight = MaxWeight;
        var sawWeight = false;

        while (true)
        {
            rest = TrimStartOws(rest);
            if (rest.IsEmpty)
            {
                break;
            }

            if (rest[0] != ';')
            {
                return;
            }

            rest = TrimStartOws(rest[1..]);
            var parameterLength = TokenLength(rest);
            if (parameterLength == 0)
            {
                return;
            }

            var parameter = rest[..parameterLength];
            rest = TrimStartOws(rest[parameterLength..]);
            if (rest.IsEmpty || rest[0] != '=')
            {
                return;
            }

            rest = TrimStartOws(rest[1..]);
            ReadOnlySpan<char> value;
            bool quoted;
            if (!rest.IsEmpty && rest[0] == '"')
            {
                var length = QuotedStringLength(rest);
                if (length < 0)
                {
                    return;
                }

                value = rest[..length];
                rest = rest[length..];
                quoted = true;
            }
            else
            {
                var length = TokenLength(rest);
                if (length == 0)
                {
                    return;
                }

                value = rest[..length];
                rest = rest[length..];
                quoted = false;
            }

            if (parameter.Equals("q", StringComparison.OrdinalIgnoreCase))
            {
                // The qvalue grammar has no quoted form, and two weights for one coding say nothing
                // that can be trusted: the element goes.
                if (sawWeight || quoted || !TryParseQValue(value, out weight))
                {
                    return;
                }

                sawWeight = true;
            }
        }

        var slot = asStated ? StatedSlotFor(name) : SlotFor(name);
        if (slot >= 0 && (weights[slot] == NotListed || (asStated && weight > weights[slot])))
        {
            weights[slot] = weight;
        }
    }

    private static int SlotFor(ReadOnlySpan<char> name)
    {
        if (name.Equals("br", StringComparison.OrdinalIgnoreCase))
        {
            return BrotliSlot;
        }

        if (name.Equals("gzip", StringComparison.OrdinalIgnoreCase) || name.Equals("x-gzip", StringComparison.OrdinalIgnoreCase))
        {
            return GzipSlot;
        }

        if (name.Equals("zstd", StringComparison.OrdinalIgnoreCase))
        {
            return ZstdSlot;
        }

        if (name.Equals("identity", StringComparison.OrdinalIgnoreCase))
        {
            return IdentitySlot;
        }

        if (name is "*")
        {
            return AnySlot;
        }

        if (name.Equals("dcz", StringComparison.OrdinalIgnoreCase))
        {
            return DczSlot;
        }

        if (name.Equals("dcb", StringComparison.OrdinalIgnoreCase))
        {
            return DcbSlot;
        }

        // Codings this server never produces (deflate, compress, ...) cannot be chosen, so their
        // weights are not kept.
        return -1;
    }

    // qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), RFC 9110 §12.4.2. The longest
    // valid qvalue has five characters, so anything longer (q=0.00000000001, a thousand digits) is
    // rejected before its digits are read.
    private static bool TryParseQValue(ReadOnlySpan<char> value, out int thousandths)
    {
        thousandths = 0;
        if (value.IsEmpty || value.Length > 5)
        {
            return false;
        }

        var units = value[0];
        if (units is not ('0' or '1'))
        {
            return false;
        }

        if (value.Length > 1)
        {
            if (value[1] != '.')
            {
                return false;
            }

            var scale = 100;
            foreach (var c in value[2..])
            {
                if (!char.IsAsciiDigit(c))
                {
                    return false;
                }

                thousandths += (c - '0') * scale;
                scale /= 10;
            }
        }

        if (units == '1')
        {
            if (thousandths != 0)
            {
                return false;
            }

            thousandths = MaxWeight;
        }

        return true;
    }

    // The length of the quoted-string (RFC 9110 §5.6.4) at the start of text, quotes included, or
    // -1 when it is not closed.
    private static int QuotedStringLength(ReadOnlySpan<char> text)
    {
        var i = 1;
        while (i < text.Length)
        {
            var c = text[i];
            if (c == '"')
            {
                return i + 1;
            }

            i += c == '\\' ? 2 : 1;
        }

        return -1;
    }

    private static int TokenLength(ReadOnlySpan<char> text)
    {
        var end = text.IndexOfAnyExcept(TokenChars);
        return end < 0 ? text.Length : end;
    }

    // OWS = *( SP / HTAB ), RFC 9110 §5.6.3.
    private static ReadOnlySpan<char> TrimStartOws(ReadOnlySpan<char> text) => text.TrimStart(" \t");

    private static ReadOnlySpan<char> TrimOws(ReadOnlySpan<char> text) => text.Trim(" \t");
}
