using System.Buffers.Text;

namespace Peregrine.Indexing;

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
        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(content, hash);
        return FromHash(hash);
    }

    /// <summary>
    /// A tag from length and modification time, for files too large to hash at index time
    /// (<see cref="PeregrineOptions.MaxHashedFileSize"/>): it changes whenever the file is
    /// rewritten, as nginx's and Caddy's tags do, but two servers agree only if their copies
    /// share the mtime. The "m" prefix keeps it apart from every content tag.
    /// </summary>
    public static string FromMetadata(long length, long lastWriteTicks)
    {
        Span<byte> bytes = stackalloc byte[16];
        BitConverter.TryWriteBytes(bytes, length);
        BitConverter.TryWriteBytes(bytes[8..], lastWriteTicks);
        Span<char> text = stackalloc char[3 + 24];
        text[0] = '"';
        text[1] = 'm';
        var written = Base64Url.EncodeToChars(bytes, text[2..]);
        text[2 + written] = '"';
        return new string(text[..(written + 3)]);
    }

    /// <summary>
    /// True when <paramref name="sha256Tag"/>, a tag holding a whole SHA-256 in base64 as the
    /// static web assets manifest writes it (<c>"iDLY…gGc="</c>), names the same bytes as
    /// <paramref name="contentTag"/>, a tag of <see cref="FromHash"/>: its first 128 bits are
    /// the same. False for a metadata tag or anything that is not such a hash.
    /// </summary>
    public static bool SameContent(string contentTag, string sha256Tag)
    {
        var quoted = sha256Tag.AsSpan();
        if (quoted.Length < 2 || quoted[0] != '"' || quoted[^1] != '"')
        {
            return false;
        }

        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        return Convert.TryFromBase64Chars(quoted[1..^1], hash, out var written)
            && written == Sha256.HashSizeInBytes
            && string.Equals(FromHash(hash), contentTag, StringComparison.Ordinal);
    }

    public static string Compute(Stream content)
    {
        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(content, hash);
        return FromHash(hash);
    }
}
