using System.Text;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Peregrine.Metrics;

/// <summary>
/// Answers GET and HEAD on one path with <see cref="PrometheusExporter.Scrape"/>; every other
/// request goes on to the next middleware.
/// </summary>
/// <remarks>
/// The endpoint has no access control of its own. The numbers say little (request counts,
/// bytes, files indexed), but anyone who can reach the path can read them: bind the server
/// to a private interface, or put the path behind a proxy rule, where that matters.
/// </remarks>
internal sealed class MetricsEndpoint
{
    private static readonly StringValues s_contentType = PrometheusExporter.ContentType;

    private readonly RequestDelegate _next;
    private readonly PrometheusExporter _exporter;
    private readonly PathString _path;

    public MetricsEndpoint(RequestDelegate next, PrometheusExporter exporter, PathString path)
    {
        _next = next;
        _exporter = exporter;
        _path = path;
    }

    public Task Invoke(HttpContext context)
    {
        if (!EndpointRequest.IsGetOrHeadOn(context.Request, _path, out var isHead))
        {
            return _next(context);
        }

        return EndpointRequest.AnswerAsync(context, StatusCodes.Status200OK, s_contentType, Encoding.UTF8.GetBytes(_exporter.Scrape()), isHead);
    }
}
