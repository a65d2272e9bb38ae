namespace Peregrine.Indexing;

/// <summary>
/// Which content types gain from compression: text of every kind, and binary formats that are
/// not compressed already. PNG, JPEG, WebP, AVIF, WOFF/WOFF2, archives, audio and video are
/// compressed by their own format and would only grow. Decided per file at index time: it makes
/// an entry negotiable (<see cref="CatalogEntry.Negotiable"/>), so its responses carry
/// <c>Vary: Accept-Encoding</c> from the first one, before any variant exists.
/// </summary>
internal static class Compressibility
{
    private static readonly HashSet<string> s_binaryCompressible = new(StringComparer.OrdinalIgnoreCase)
    {
        "application/wasm",
        "application/octet-stream+wasm",
        "font/ttf",
        "font/otf",
        "font/collection",
        "application/x-font-ttf",
        "application/x-font-opentype",
        "application/vnd.ms-fontobject",
        "image/x-icon",
        "image/vnd.microsoft.icon",
        "image/bmp",
        "application/x-javascript",
        "application/ecmascript",
        "application/x-sh",
        "application/x-tar",
        "application/rtf",
        "application/yaml",
        "application/toml",
        "application/graphql",
        "application/x-ndjson",
    };

    public static bool IsCompressible(string contentType)
    {
        if (ContentTypeMap.IsText(contentType))
        {
            return true;
        }

        var bare = contentType.AsSpan();
        var semicolon = bare.IndexOf(';');
        if (semicolon >= 0)
        {
            bare = bare[..semicolon].Trim();
        }

        return bare.EndsWith("+json", StringComparison.OrdinalIgnoreCase)
            || bare.EndsWith("+xml", StringComparison.OrdinalIgnoreCase)
            || s_binaryCompressible.GetAlternateLookup<ReadOnlySpan<char>>().Contains(bare);
    }
}
