using System.Buffers;
using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;

namespace Peregrine.Negotiation;

/// <summary>
/// Proactive negotiation of the content coding from Accept-Encoding (RFC 9110 §12.5.3).
/// </summary>
/// <remarks>
/// <para>
/// The parser is one forward pass over the field value: every character is looked at a bounded
/// number of times, nothing is split into arrays and nothing is allocated, so a hostile header of
/// any size costs time linear in its length and no memory. Kestrel's request header limits bound
/// that length; this code does not rely on them.
/// </para>
/// <para>Policy where the RFC leaves room, each choice made once here:</para>
/// <list type="bullet">
/// <item>No Accept-Encoding at all: identity. §12.5.3 says any coding is then acceptable, but a
/// client that sent nothing may not decode anything, so the unencoded bytes are the safe answer.</item>
/// <item>A malformed element (bad token, stray <c>=</c>, <c>q</c> without a value, an invalid
/// qvalue such as <c>q=2</c>, <c>q=-1</c> or <c>q=0.1234</c>, a second <c>q</c>, an unterminated
/// quoted-string) is ignored on its own; the rest of the field still counts. Guessing at what a
/// malformed weight meant could turn "do not send me this" into "send me this".</item>
/// <item>A coding listed twice is weighed by its first valid occurrence; <c>x-gzip</c> and
/// <c>gzip</c> are one coding (§8.4.1.3), so whichever comes first counts.</item>
/// <item>Identity that is not named (and not covered by <c>*</c>) is acceptable (§12.5.3) but ranks
/// below every coding the client named with a non-zero weight: a client that lists only
/// <c>gzip;q=0.5</c> still gets gzip.</item>
/// <item>Equal weights are broken by the server's preference br &gt; zstd &gt; gzip &gt; identity,
/// smallest body first (§12.5.3 leaves the order among equals to the server).</item>
/// </list>
/// </remarks>
internal static partial class AcceptEncoding
{
    // A qvalue is held in thousandths: §12.4.2 allows at most three decimals, so every valid weight
    // is an integer in 0..1000 and comparisons are exact.
    private const int NotListed = -1;
    private const int MaxWeight = 1000;

    // The weight given to identity when the client neither named it nor sent "*": the smallest
    // non-zero weight, so identity stays acceptable but loses to any named coding, and the tie-break
    // below puts identity after a coding named with q=0.001 too.
    private const int UnnamedIdentityWeight = 1;

    // Where each weight is kept while the field is read: one int per coding the server can produce,
    // plus "*", on the stack.
    private const int BrotliSlot = 0;
    private const int ZstdSlot = 1;
    private const int GzipSlot = 2;
    private const int IdentitySlot = 3;
    private const int AnySlot = 4;

    // dcz and dcb (RFC 9842 §4) are weighed here but chosen by DeltaSelector, never by Choose.
    private const int DczSlot = 5;
    private const int DcbSlot = 6;
    private const int SlotCount = 7;

    // tchar, RFC 9110 §5.6.2.
    private static readonly SearchValues<char> TokenChars =
        SearchValues.Create("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");

    private static readonly SearchValues<char> CommaOrQuote = SearchValues.Create(",\"");

    /// <summary>
    /// Chooses the representation to send for a request carrying <paramref name="acceptEncoding"/>.
    /// </summary>
    /// <param name="acceptEncoding">Every Accept-Encoding field line of the request; several lines
    /// are one comma-separated list (RFC 9110 §5.3).</param>
    /// <param name="available">The encoded variants that exist for the resource.</param>
    /// <param name="coding">The chosen representation; <see cref="ContentCoding.Identity"/> when the
    /// method returns false.</param>
    /// <returns>False when nothing available is acceptable: identity is refused and no available
    /// coding has a non-zero weight. The caller then decides between 406 and sending identity anyway
    /// (§12.5.3 allows both).</returns>
    public static bool TrySelect(StringValues acceptEncoding, ContentCodingSet available, out ContentCoding coding)
    {
        if (acceptEncoding.Count == 0)
        {
            coding = ContentCoding.Identity;
            return true;
        }

        // An empty field value, or one whose every element is ignored, leaves everything NotListed,
        // which is exactly §12.5.3's "does not want any content coding": identity only.
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        for (var i = 0; i < acceptEncoding.Count; i++)
        {
            ParseLine(acceptEncoding[i].AsSpan(), weights);
        }

        return Choose(weights, available, out coding);
    }

    /// <summary>The same choice for one field value given as characters (the HTTP/1.1 fast path's form).</summary>
    public static bool TrySelect(ReadOnlySpan<char> acceptEncoding, ContentCodingSet available, out ContentCoding coding)
    {
        Span<int> weights = stackalloc int[SlotCount];
        weights.Fill(NotListed);
        ParseLine(acceptEncoding, weights);
        return Choose(weights, available, out coding);
    }

    private static bool Choose(ReadOnlySpan<int> weights, ContentCodingSet available, out ContentCoding coding)
    {
        // §12.5.3: "*" matches any coding not explicitly listed; a coding neither listed nor covered
        // by "*" is not acceptable. Codings are visited in server preference order and replaced only
        // by a strictly higher weight, so ties go to the earlier, smaller coding.
        var any = weights[AnySlot];
        var best = 0;
        coding = ContentCoding.Identity;
        Consider(available, ContentCodingSet.Brotli, ContentCoding.Brotli, weights[BrotliSlot], any, ref best, ref coding);
        Consider(available, ContentCodingSet.Zstd, ContentCoding.Zstd, weights[ZstdSlot], any, ref best, ref coding);
        Consider(available, ContentCodingSet.Gzip, ContentCoding.Gzip, weights[GzipSlot], any, ref best, ref coding);

        // §12.5.3: identity is acceptable unless excluded by "identity;q=0", or by "*;q=0" without a
        // more specific entry for identity.
        var identity = weights[IdentitySlot] != NotListed ? weights[IdentitySlot]
            : any != NotListed ? any
            : UnnamedIdentityWeight;
        if (identity > best)
        {
            best = identity;
            coding = ContentCoding.Identity;
        }

        return best > 0;
    }

    private static void Consider(
        ContentCodingSet available, ContentCodingSet variant, ContentCoding candidate, int listed, int any, ref int best, ref ContentCoding coding)
    {
        if ((available & variant) == 0)
        {
            return;
        }

        var weight = listed != NotListed ? listed : any != NotListed ? any : 0;
        if (weight > best)
        {
            best = weight;
            coding = candidate;
        }
    }

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
