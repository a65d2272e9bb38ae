using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Fields;

namespace Peregrine.Negotiation;

/// <summary>
/// RFC 9842 §8.2.2 ("Response readability"): a delta is sent only when the client may read both
/// the dictionary and the response, which a server tells from the Fetch metadata fields:
/// <list type="number">
/// <item><c>Sec-Fetch-Site: same-origin</c>, or no Sec-Fetch-Site: allowed (§8.2.2.1; a client
/// that sends no Fetch metadata is not a browser that guards readability);</item>
/// <item>otherwise by <c>Sec-Fetch-Mode</c>: none, <c>navigate</c> or <c>same-origin</c>:
/// allowed; <c>cors</c>: allowed only when the request has an Origin and the response's
/// Access-Control-Allow-Origin is <c>*</c> or that Origin (§8.2.2.2, the server's half of the
/// CORS check); any other mode (<c>no-cors</c>, <c>websocket</c>): refused.</item>
/// </list>
/// Chromium sends these fields on every request it adds Available-Dictionary to. A refused
/// request gets the ordinary coding, never an error. The dictionary side (which responses the
/// browser keeps) is the browser's to guard: Use-As-Dictionary is sent on every response.
/// </summary>
internal static class DictionaryGate
{
    public static bool Allows(HttpRequest request, ConfiguredHeaders configured)
    {
        var headers = request.Headers;
        var site = headers["Sec-Fetch-Site"];
        if (site.Count == 0 || Is(site, "same-origin"))
        {
            return true;
        }

        var mode = headers["Sec-Fetch-Mode"];
        if (mode.Count == 0 || Is(mode, "navigate") || Is(mode, "same-origin"))
        {
            return true;
        }

        if (!Is(mode, "cors"))
        {
            return false;
        }

        var origin = headers.Origin;
        if (origin.Count != 1 || string.IsNullOrEmpty(origin[0]))
        {
            return false;
        }

        var allowed = configured.AllowedOrigin(request);
        return allowed.Count == 1 && (allowed[0] == "*" || string.Equals(allowed[0], origin[0], StringComparison.Ordinal));
    }

    // One field line holding the token (RFC 8941 §3.3.4, compared as sent).
    private static bool Is(StringValues field, string token)
        => field.Count == 1 && field[0].AsSpan().Trim(' ').Equals(token, StringComparison.OrdinalIgnoreCase);
}
