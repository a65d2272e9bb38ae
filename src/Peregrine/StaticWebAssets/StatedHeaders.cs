namespace Peregrine.StaticWebAssets;

/// <summary>
/// The response header fields the endpoints manifest states for one route, the ones
/// <c>MapStaticAssets</c> sends and Peregrine sends the same way: Cache-Control (already
/// replaced by <c>no-cache</c> where MapStaticAssets replaces it), Content-Type, Vary, and the
/// ETag of each representation. Each ETag is the SHA-256 of the bytes the build saw, in base64;
/// the index sends it only while the bytes it serves still hash to it (see
/// docs/library.md, "Where it differs from MapStaticAssets").
/// </summary>
/// <param name="CacheControl">Cache-Control to send, or <see langword="null"/> to keep the file's own.</param>
/// <param name="ContentType">Content-Type as stated (<c>text/css</c>), or <see langword="null"/>.</param>
/// <param name="Vary">Vary as stated (<c>Accept-Encoding</c>), or <see langword="null"/>.</param>
/// <param name="ETag">The identity representation's ETag, quotes included, or <see langword="null"/>.</param>
/// <param name="BrotliETag">The ETag of the route's <c>br</c> answer, or <see langword="null"/>.</param>
/// <param name="GzipETag">The ETag of the route's <c>gzip</c> answer, or <see langword="null"/>.</param>
internal sealed record StatedHeaders(string? CacheControl, string? ContentType, string? Vary, string? ETag, string? BrotliETag, string? GzipETag)
{
    /// <summary>What <paramref name="route"/> states, with <paramref name="cacheControl"/> as the Cache-Control to send.</summary>
    public static StatedHeaders For(AssetRoute route, string? cacheControl)
        => new(cacheControl, route.Header("Content-Type"), route.Header("Vary"), route.Header("ETag"), route.EncodedETag("br"), route.EncodedETag("gzip"));

    /// <summary>Only a Cache-Control (a renamed file no route names), or nothing.</summary>
    public static StatedHeaders? CacheControlOnly(string? cacheControl)
        => cacheControl is null ? null : new(cacheControl, null, null, null, null, null);

    /// <summary>True when the stated Vary names Accept-Encoding: the answer is negotiated, as Peregrine's own Vary says too.</summary>
    public bool VariesByEncoding => Vary is not null && Vary.Contains("Accept-Encoding", StringComparison.OrdinalIgnoreCase);
}
