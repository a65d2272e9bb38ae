using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Cors;

namespace Peregrine.Fields;

/// <summary>
/// The response headers that come from options rather than from a file: the configured extra
/// headers, the CORS policy and the Vary values that follow from it. Derived once, and shared
/// by the middleware and the HTTP/1.1 fast path so that the two cannot drift apart. Each
/// response's list (<c>Indexing/ResponseFields</c>) folds these in; what depends on the
/// request's Origin is decided here, in <see cref="AddCors"/>, and nowhere else.
/// </summary>
internal sealed class ConfiguredHeaders
{
    public ConfiguredHeaders(PeregrineOptions options)
    {
        Cors = CorsPolicy.Create(options.CorsOrigins);
        // A header the user configured by name is theirs: it replaces CORS's any-origin header of
        // the same name, as it replaces the built-in Cache-Control.
        (string Name, StringValues Value)[] configured = [.. options.Headers.Select(h => (h.Key, new StringValues(h.Value)))];
        Extra = [.. configured, .. Cors.HeadersForEveryRequest.Where(c => !configured.Any(h => string.Equals(h.Name, c.Name, StringComparison.OrdinalIgnoreCase)))];
        Vary = Cors.VariesByOrigin ? "Origin" : StringValues.Empty;
        VaryNegotiable = Cors.VariesByOrigin ? "Accept-Encoding, Origin" : "Accept-Encoding";
        VaryDictionary = Cors.VariesByOrigin ? "Accept-Encoding, Available-Dictionary, Origin" : "Accept-Encoding, Available-Dictionary";
    }

    /// <summary>
    /// Headers every file response carries: the configured ones, and CORS's when it allows any
    /// origin, one of each name. Those that depend on the request's Origin come from <see cref="Cors"/>.
    /// </summary>
    public (string Name, StringValues Value)[] Extra { get; }

    public CorsPolicy Cors { get; }

    /// <summary>Vary for a file with a single representation.</summary>
    public StringValues Vary { get; }

    /// <summary>Vary for a file whose representation depends on Accept-Encoding (RFC 9110 §12.5.5).</summary>
    public StringValues VaryNegotiable { get; }

    /// <summary>
    /// Vary for a file that may be sent as a delta against a dictionary the client holds: RFC
    /// 9842 §6.2 asks for Available-Dictionary beside Accept-Encoding on every such response.
    /// </summary>
    public StringValues VaryDictionary { get; }

    /// <summary>Vary for a file, by whether its representation is negotiated.</summary>
    public StringValues VaryFor(bool negotiable) => negotiable ? VaryNegotiable : Vary;

    /// <summary>
    /// True when the answer depends on the request's Origin (a list of allowed origins), so it
    /// cannot be encoded ahead of the request: the fast path hands such requests on.
    /// </summary>
    public bool DependsOnOrigin => Cors.VariesByOrigin;

    /// <summary>
    /// The Access-Control-Allow-Origin a response to <paramref name="request"/> carries: a
    /// configured header of that name, else what the CORS policy allows; empty without either.
    /// </summary>
    public StringValues AllowedOrigin(HttpRequest request)
    {
        foreach (var (name, value) in Extra)
        {
            if (string.Equals(name, "Access-Control-Allow-Origin", StringComparison.OrdinalIgnoreCase))
            {
                return value;
            }
        }

        return Cors.AllowOrigin(request);
    }

    /// <summary>
    /// The CORS fields that depend on the request, added to a response being answered: with a
    /// list of origins, the allowed one is echoed. With any origin allowed the fields are in
    /// <see cref="Extra"/> already, the same for every request.
    /// </summary>
    public void AddCors(HttpRequest request, IHeaderDictionary headers)
    {
        if (Cors.VariesByOrigin)
        {
            Cors.AddResponseHeaders(request, headers);
        }
    }
}
