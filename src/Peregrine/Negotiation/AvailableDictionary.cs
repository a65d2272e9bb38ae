using Microsoft.Extensions.Primitives;

namespace Peregrine.Negotiation;

/// <summary>
/// The <c>Available-Dictionary</c> request field (RFC 9842 §2.2): an RFC 8941 byte sequence
/// (§3.3.5), <c>:base64:</c>, holding the SHA-256 of the dictionary the client holds for this URL.
/// </summary>
internal static class AvailableDictionary
{
    /// <summary>32 bytes in base64 with its padding.</summary>
    private const int EncodedLength = 44;

    /// <summary>
    /// Reads the hash into <paramref name="sha256"/> (32 bytes). False for anything else: no
    /// field, several field lines or members (the client sends exactly one hash), a value that is
    /// not a byte sequence of 32 bytes. The length is checked before a character is decoded, so
    /// a hostile value costs nothing however long it is; nothing is allocated.
    /// </summary>
    public static bool TryRead(StringValues field, Span<byte> sha256)
    {
        if (field.Count != 1 || field[0] is not { } value)
        {
            return false;
        }

        // RFC 8941 §4.2: leading and trailing spaces are discarded.
        var text = value.AsSpan().Trim(' ');
        if (text.Length != EncodedLength + 2 || text[0] != ':' || text[^1] != ':')
        {
            return false;
        }

        text = text[1..^1];
        foreach (var c in text)
        {
            // RFC 8941 §3.3.5: the base64 alphabet of RFC 4648 §4 and '=' only; Convert would
            // also take white space inside.
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('+' or '/' or '='))
            {
                return false;
            }
        }

        return Convert.TryFromBase64Chars(text, sha256, out var written) && written == 32;
    }
}
