using Microsoft.AspNetCore.Http;

namespace Peregrine.Fallback;

/// <summary>
/// Whether a request that matched no file is a browser navigation, the only kind that gets an
/// HTML page in place of a file (the SPA's shell, the 404 page): a GET or HEAD that says
/// <c>Sec-Fetch-Mode: navigate</c> (every current browser sends it when following a link or
/// typing an address), or whose Accept names <c>text/html</c>. A script's <c>fetch</c>, an
/// image, a stylesheet and <c>curl</c>'s <c>*/*</c> are not navigations.
/// </summary>
internal static class Navigation
{
    public static bool Is(HttpRequest request)
    {
        if (!HttpMethods.IsGet(request.Method) && !HttpMethods.IsHead(request.Method))
        {
            return false;
        }

        var headers = request.Headers;
        foreach (var mode in headers["Sec-Fetch-Mode"])
        {
            if (string.Equals(mode, "navigate", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        foreach (var accept in headers.Accept)
        {
            if (accept is not null && accept.Contains("text/html", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    /// <summary>
    /// True when the path's last segment has an extension (<c>/app.3f9a1c.js</c>): an asset, not
    /// a client-side route, so the SPA's shell is not sent for it.
    /// </summary>
    public static bool NamesAFile(ReadOnlySpan<char> path) => path[(path.LastIndexOf('/') + 1)..].Contains('.');
}
