using Microsoft.Net.Http.Headers;

namespace Peregrine.Server.Auth;

/// <summary>
/// Under Basic authentication every file answers a request that carries credentials. RFC 9111
/// §3.5: a shared cache (a proxy, a CDN) must not reuse such a response for other requests
/// unless its Cache-Control has <c>public</c>, <c>must-revalidate</c> or <c>s-maxage</c>; so a
/// <c>public</c> there would invite it to hand one user's protected files to anyone. With
/// authentication on, every Cache-Control the server sends for files (the fingerprint rule,
/// <c>--cache</c> rules, a <c>--header 'Cache-Control: ...'</c>) is made <c>private</c> once, at
/// start-up: <c>public</c> becomes <c>private</c>, and <c>private</c> goes first where
/// <c>must-revalidate</c> or <c>s-maxage</c> would still let a shared cache store it. The rest
/// (<c>max-age</c>, <c>immutable</c>, <c>no-cache</c>) stays: the browser's own cache may keep
/// the files as before.
/// </summary>
internal static class PrivateCaching
{
    public static void Apply(PeregrineOptions options)
    {
        options.CacheControl = MakePrivate(options.CacheControl);
        options.FingerprintedCacheControl = MakePrivate(options.FingerprintedCacheControl);
        options.CacheRules = [.. options.CacheRules.Select(rule => rule with { CacheControl = MakePrivate(rule.CacheControl) })];
        if (options.Headers.TryGetValue(HeaderNames.CacheControl, out var configured))
        {
            options.Headers[HeaderNames.CacheControl] = MakePrivate(configured);
        }
    }

    /// <summary>The value with no directive that lets a shared cache reuse an authenticated response; the same string when it has none.</summary>
    public static string MakePrivate(string value)
    {
        if (string.IsNullOrWhiteSpace(value))
        {
            return value;
        }

        var directives = value.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries).ToList();
        var changed = false;
        var isPrivate = directives.Exists(d => Is(d, "private") || Is(d, "no-store"));
        for (var i = directives.Count - 1; i >= 0; i--)
        {
            if (Is(directives[i], "public"))
            {
                changed = true;
                if (isPrivate)
                {
                    directives.RemoveAt(i);
                }
                else
                {
                    directives[i] = "private";
                    isPrivate = true;
                }
            }
        }

        if (!isPrivate && directives.Exists(d => Is(d, "must-revalidate") || Is(d, "s-maxage")))
        {
            directives.Insert(0, "private");
            changed = true;
        }

        return changed ? string.Join(", ", directives) : value;
    }

    // Directive names are case-insensitive (RFC 9111 §5.2); a value follows '='.
    private static bool Is(string directive, string name)
        => directive.StartsWith(name, StringComparison.OrdinalIgnoreCase)
            && (directive.Length == name.Length || directive[name.Length] is '=' or ' ' or '\t');
}
