using System.Collections.Frozen;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Peregrine.Cors;

/// <summary>
/// Cross-origin reads of static files (the Fetch standard's CORS protocol): which origins may
/// read, the preflight answer, and the headers a script may see. Files are public and read-only,
/// so credentials are never allowed and only GET and HEAD are offered.
/// </summary>
internal sealed class CorsPolicy
{
    private static readonly StringValues s_any = "*";
    private static readonly StringValues s_methods = "GET, HEAD";
    private static readonly StringValues s_maxAge = "86400";

    // ETag, Content-Range and Accept-Ranges are not CORS-safelisted response headers, and a
    // script resuming a download or revalidating needs them.
    private static readonly StringValues s_expose = "ETag, Content-Range, Accept-Ranges";

    private readonly bool _any;
    private readonly FrozenSet<string> _origins;

    private CorsPolicy(bool any, FrozenSet<string> origins)
    {
        _any = any;
        _origins = origins;
    }

    public static CorsPolicy Create(IEnumerable<string> origins)
    {
        var list = origins.ToList();
        return new CorsPolicy(list.Contains("*"), list.Where(o => o != "*").ToFrozenSet(StringComparer.Ordinal));
    }

    public bool Enabled => _any || _origins.Count != 0;

    /// <summary>True when the answer depends on the Origin header, so caches must key on it.</summary>
    public bool VariesByOrigin => !_any && _origins.Count != 0;

    /// <summary>
    /// The headers that do not depend on the request: with any origin allowed, every response
    /// says so, whether or not the request carried an Origin (a shared cache may hand it to a
    /// cross-origin fetch later).
    /// </summary>
    public (string Name, StringValues Value)[] HeadersForEveryRequest
        => _any ? [("Access-Control-Allow-Origin", s_any), ("Access-Control-Expose-Headers", s_expose)] : [];

    public bool IsPreflight(HttpRequest request)
        => Enabled && HttpMethods.IsOptions(request.Method)
            && request.Headers.Origin.Count != 0
            && request.Headers.AccessControlRequestMethod.Count != 0;

    public void AddResponseHeaders(HttpRequest request, IHeaderDictionary headers)
    {
        if (AllowOrigin(request) is { Count: > 0 } allow)
        {
            headers.AccessControlAllowOrigin = allow;
            headers.AccessControlExposeHeaders = s_expose;
        }
    }

    /// <summary>204 with what the client may do; an origin not allowed gets 204 without them, and the browser refuses.</summary>
    public void AnswerPreflight(HttpRequest request, HttpResponse response)
    {
        response.StatusCode = StatusCodes.Status204NoContent;
        var headers = response.Headers;
        if (VariesByOrigin)
        {
            headers.Vary = "Origin";
        }

        if (AllowOrigin(request) is { Count: > 0 } allow)
        {
            headers.AccessControlAllowOrigin = allow;
            headers.AccessControlAllowMethods = s_methods;
            headers.AccessControlMaxAge = s_maxAge;

            // Request headers on a GET for a file are harmless (Range, If-None-Match...), so
            // whatever the client asks for is allowed.
            if (request.Headers.AccessControlRequestHeaders is { Count: > 0 } requested)
            {
                headers.AccessControlAllowHeaders = requested;
            }
        }
    }

    /// <summary>The Access-Control-Allow-Origin this request gets: <c>*</c>, its own Origin when listed, or empty.</summary>
    public StringValues AllowOrigin(HttpRequest request)
    {
        if (_any)
        {
            return s_any;
        }

        var origin = request.Headers.Origin;
        return origin.Count == 1 && _origins.Contains(origin[0]!) ? origin : StringValues.Empty;
    }
}
