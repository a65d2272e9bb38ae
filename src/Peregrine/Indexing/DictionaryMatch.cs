using System.Buffers;

namespace Peregrine.Indexing;

/// <summary>
/// The <c>match</c> pattern of a fingerprinted asset's <c>Use-As-Dictionary</c> (RFC 9842
/// §2.1.1): the same folder, stem and extension, any fingerprint, so that the browser offers
/// this version as the dictionary for the next (<c>/assets/app-*.js</c> for
/// <c>/assets/app-BkQ3x9Zt.js</c>). The pattern is also the key under which compression keeps
/// the versions of one asset: two entries are versions of one asset exactly when their patterns
/// are equal.
/// </summary>
/// <remarks>
/// The pattern is a URLPattern pathname matched against the percent-encoded path, and a
/// structured-field string (RFC 8941 §3.3.3). Rather than escape for both, a path is given a
/// pattern only when every character is one that a URL path carries as is and URLPattern reads
/// as itself: letters, digits and <c>-._~/@!$&amp;',;=</c>. Any other path (a space, a
/// non-ASCII name, a <c>+</c> or <c>:</c>, which URLPattern reads as syntax) takes no part.
/// The pattern carries the instance's <see cref="PeregrineOptions.RequestPath"/> but not a
/// PathBase set per request (<c>UsePathBase</c>), which is not known when the entry is built.
/// </remarks>
internal static class DictionaryMatch
{
    private static readonly SearchValues<char> PlainPathChars =
        SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/@!$&',;=");

    /// <summary>
    /// The pattern for the file at <paramref name="relativePath"/> (leading slash) under the
    /// mount <paramref name="requestPath"/>, or <see langword="null"/> when its name carries no
    /// fingerprint or the path is not plain.
    /// </summary>
    public static string? For(string requestPath, string relativePath)
    {
        var slash = relativePath.LastIndexOf('/');
        var fileName = relativePath.AsSpan(slash + 1);
        if (!Fingerprint.Locate(fileName, out var start, out var end)
            || requestPath.AsSpan().ContainsAnyExcept(PlainPathChars)
            || relativePath.AsSpan().ContainsAnyExcept(PlainPathChars))
        {
            return null;
        }

        var nameStart = slash + 1;
        return string.Concat(requestPath, relativePath.AsSpan(0, nameStart + start), "*", relativePath.AsSpan(nameStart + end));
    }

    /// <summary>
    /// The pattern, relative to the web root, for a route the static web assets' endpoints
    /// manifest says is fingerprinted (its <c>fingerprint</c> property): the route's last segment
    /// with that fingerprint, where it stands between a dot or dash and a dot, replaced by
    /// <c>*</c> (<c>/css/site.*.css</c> for <c>/css/site.khy4lop6wu.css</c>,
    /// <c>/App.*.styles.css</c> for <c>/App.khy4lop6wu.styles.css</c>). The token is taken
    /// from the manifest, never guessed from the name; <see langword="null"/> when the route
    /// does not carry it so, or the path is not plain.
    /// </summary>
    public static string? ForRoute(string routePath, string fingerprint)
    {
        var slash = routePath.LastIndexOf('/');
        if (slash < 0 || fingerprint.Length == 0 || routePath.AsSpan().ContainsAnyExcept(PlainPathChars))
        {
            return null;
        }

        var start = routePath.LastIndexOf(fingerprint, StringComparison.Ordinal);
        var end = start + fingerprint.Length;
        if (start <= slash + 1 || routePath[start - 1] is not ('.' or '-') || end >= routePath.Length || routePath[end] != '.')
        {
            return null;
        }

        return string.Concat(routePath.AsSpan(0, start), "*", routePath.AsSpan(end));
    }

    /// <summary>
    /// <paramref name="pattern"/> (from <see cref="ForRoute"/>) under the mount
    /// <paramref name="requestPath"/>, or <see langword="null"/> when the mount is not plain.
    /// </summary>
    public static string? Under(string requestPath, string pattern)
        => requestPath.AsSpan().ContainsAnyExcept(PlainPathChars) ? null : string.Concat(requestPath, pattern);

    /// <summary>
    /// True when <paramref name="pattern"/> is one <see cref="For"/> could have made: a path
    /// from the root with one <c>*</c> in its last segment and only plain characters besides.
    /// For patterns read back from disk.
    /// </summary>
    public static bool IsPattern(string pattern)
    {
        var star = pattern.IndexOf('*', StringComparison.Ordinal);
        return pattern.Length > 1 && pattern[0] == '/'
            && star > pattern.LastIndexOf('/') && star == pattern.LastIndexOf('*')
            && !pattern.AsSpan(0, star).ContainsAnyExcept(PlainPathChars)
            && !pattern.AsSpan(star + 1).ContainsAnyExcept(PlainPathChars);
    }

    /// <summary>The field value for <paramref name="pattern"/>: <c>match="…"</c>, nothing to escape by construction.</summary>
    public static string FieldValue(string pattern) => "match=\"" + pattern + "\"";
}
