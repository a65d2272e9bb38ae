using Microsoft.Extensions.Primitives;
using Peregrine.Cors;

namespace Peregrine;

/// <summary>
/// The response headers that come from options rather than from a file: the configured extra
/// headers, the CORS policy and the Vary values that follow from it. Derived once, and shared
/// by the middleware and the HTTP/1.1 fast path so that the two cannot drift apart.
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

    public StringValues VaryFor(Indexing.CatalogEntry entry) => entry.Negotiable ? VaryNegotiable : Vary;
}
