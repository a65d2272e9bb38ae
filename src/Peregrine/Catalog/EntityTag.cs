using System.Buffers.Text;
using System.Security.Cryptography;

namespace Peregrine.Catalog;

/// <summary>
/// Strong entity tags (RFC 9110 §8.8.3) derived from content alone: the first 128 bits of the
/// SHA-256 of the bytes, base64url-encoded. Two servers holding the same bytes give the same
/// tag, and a tag changes exactly when the bytes do, which mtime-and-size tags cannot promise.
/// </summary>
internal static class EntityTag
{
    private const int TagBytes = 16;

    public static string FromHash(ReadOnlySpan<byte> sha256)
    {
        Span<char> text = stackalloc char[2 + 24];
        text[0] = '"';
        var written = Base64Url.EncodeToChars(sha256[..TagBytes], text[1..]);
        text[1 + written] = '"';
        return new string(text[..(written + 2)]);
    }

    public static string Compute(ReadOnlySpan<byte> content)
    {
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(content, hash);
        return FromHash(hash);
    }

    public static string Compute(Stream content)
    {
        Span<byte> hash = stackalloc byte[SHA256.HashSizeInBytes];
        SHA256.HashData(content, hash);
        return FromHash(hash);
    }
}
