namespace Peregrine.StaticWebAssets;

/// <summary>
/// The response header fields the endpoints manifest states for one route, the ones
/// <c>MapStaticAssets</c> sends and Peregrine sends the same way: Cache-Control (already
/// replaced by <c>no-cache</c> where MapStaticAssets replaces it), Content-Type, Vary, and the
/// ETag of each representation. Each ETag is the SHA-256 of the bytes the build saw, in base64;
/// the index sends it only while the bytes it serves still hash to it (see
/// docs/library.md, "Headers as MapStaticAssets sends them").
/// </summary>
/// <param name="CacheControl">Cache-Control to send, or <see langword="null"/> to keep the file's own.</param>
/// <param name="ContentType">Content-Type as stated (<c>text/css</c>), or <see langword="null"/>.</param>
/// <param name="Vary">Vary as stated (<c>Accept-Encoding</c>), or <see langword="null"/>.</param>
/// <param name="ETag">The identity representation's ETag, quotes included, or <see langword="null"/>.</param>
/// <param name="Encodings">The route's encoded representations, as its selector endpoints state them; empty for none.</param>
/// <param name="ContentEncoding">
/// The Content-Encoding the route's own answer states (<c>br</c> for <c>/app.css.br</c>), or
/// <see langword="null"/>: such a route answers with the encoded file's bytes as they are, under
/// the type of the file they encode, whatever the request accepts, as MapStaticAssets answers it.
/// </param>
internal sealed record StatedHeaders(string? CacheControl, string? ContentType, string? Vary, string? ETag, IReadOnlyList<StatedEncoding> Encodings, string? ContentEncoding = null)
{
    /// <summary>What <paramref name="route"/> states, with <paramref name="cacheControl"/> as the Cache-Control to send and <paramref name="encodedFile"/> to find its encoded files.</summary>
    public static StatedHeaders For(AssetRoute route, string? cacheControl, Func<string, string?> encodedFile)
        => new(cacheControl, route.Header("Content-Type"), route.Header("Vary"), route.Header("ETag"), StatedEncoding.Of(route, encodedFile), route.Header("Content-Encoding"));

    /// <summary>True for a route whose answer is an encoded file as it is (<see cref="ContentEncoding"/>).</summary>
    public bool IsEncodedFile => ContentEncoding is not null;

    /// <summary>True when the stated Vary names Accept-Encoding: the answer is negotiated, as Peregrine's own Vary says too.</summary>
    public bool VariesByEncoding => Vary is not null && Vary.Contains("Accept-Encoding", StringComparison.OrdinalIgnoreCase);

    /// <summary>The ETag stated for the <paramref name="coding"/> representation (<c>br</c>, <c>gzip</c>), or <see langword="null"/>.</summary>
    public string? EncodedETag(string coding)
    {
        foreach (var encoding in Encodings)
        {
            if (string.Equals(encoding.Coding, coding, StringComparison.OrdinalIgnoreCase))
            {
                return encoding.ETag;
            }
        }

        return null;
    }
}

/// <summary>
/// One encoded representation a route states: its coding, the file that holds its bytes, the
/// ETag of those bytes and the server's preference for it (the selector's <c>Quality</c>).
/// </summary>
/// <param name="Coding">The Content-Encoding token as stated: <c>br</c>, <c>gzip</c>.</param>
/// <param name="File">The encoded file, absolute; <see langword="null"/> when the host cannot say where it is.</param>
/// <param name="ETag">Its ETag, quotes included, or <see langword="null"/>.</param>
/// <param name="Quality">The server's preference, used only to break a tie between codings the client weighs alike.</param>
internal sealed record StatedEncoding(string Coding, string? File, string? ETag, double Quality)
{
    /// <summary>The encodings <paramref name="route"/> states, each coding once, in the manifest's order.</summary>
    public static IReadOnlyList<StatedEncoding> Of(AssetRoute route, Func<string, string?> encodedFile)
    {
        if (route.Encodings.Count == 0)
        {
            return [];
        }

        var list = new List<StatedEncoding>(route.Encodings.Count);
        foreach (var encoding in route.Encodings)
        {
            if (!list.Exists(e => string.Equals(e.Coding, encoding.Coding, StringComparison.OrdinalIgnoreCase)))
            {
                list.Add(new StatedEncoding(encoding.Coding, encodedFile(encoding.AssetPath), encoding.ETag, encoding.Quality));
            }
        }

        return list;
    }
}
