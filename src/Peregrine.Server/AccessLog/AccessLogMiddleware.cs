using System.Diagnostics;
using Microsoft.AspNetCore.Http.Features;

namespace Peregrine.Server.AccessLog;

/// <summary>
/// Records one <see cref="AccessLogEntry"/> per request, after the response. Added only when
/// an access log is asked for; without one the pipeline does not contain it at all.
/// </summary>
internal sealed class AccessLogMiddleware(RequestDelegate next, AccessLogWriter writer)
{
    public async Task Invoke(HttpContext context)
    {
        var time = DateTime.UtcNow;
        var started = Stopwatch.GetTimestamp();
        var failed = false;
        try
        {
            await next(context);
        }
        catch
        {
            failed = true;
            throw;
        }
        finally
        {
            var request = context.Request;
            var response = context.Response;

            // An exception before the response started becomes Kestrel's 500.
            var status = failed && !response.HasStarted ? StatusCodes.Status500InternalServerError : response.StatusCode;
            long? bytes = HttpMethods.IsHead(request.Method) || status is StatusCodes.Status304NotModified or StatusCodes.Status204NoContent
                ? 0
                : response.ContentLength;
            writer.Write(new AccessLogEntry(
                time,
                context.Connection.RemoteIpAddress,
                request.Method,
                // The target as the client sent it, query included and undecoded.
                context.Features.Get<IHttpRequestFeature>()?.RawTarget ?? request.Path.Value ?? "",
                request.Protocol,
                status,
                bytes,
                request.Headers.Referer,
                request.Headers.UserAgent,
                Stopwatch.GetElapsedTime(started).TotalMilliseconds));
        }
    }
}
