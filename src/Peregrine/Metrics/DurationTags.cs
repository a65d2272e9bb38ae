using Microsoft.AspNetCore.Http;

namespace Peregrine.Metrics;

/// <summary>
/// Tag values of <c>peregrine.request.duration</c> as OpenTelemetry's HTTP conventions spell
/// them, each an interned string so that recording allocates nothing.
/// </summary>
internal static class DurationTags
{
    /// <summary>
    /// <c>http.request.method</c>: the method when it is one HTTP defines (RFC 9110 §9, and PATCH),
    /// otherwise <c>_OTHER</c>, which keeps the number of series bounded whatever clients send.
    /// </summary>
    public static string Method(string method)
        => HttpMethods.IsGet(method) ? HttpMethods.Get
            : HttpMethods.IsHead(method) ? HttpMethods.Head
            : HttpMethods.IsOptions(method) ? HttpMethods.Options
            : HttpMethods.IsPost(method) ? HttpMethods.Post
            : HttpMethods.IsPut(method) ? HttpMethods.Put
            : HttpMethods.IsDelete(method) ? HttpMethods.Delete
            : HttpMethods.IsPatch(method) ? HttpMethods.Patch
            : HttpMethods.IsTrace(method) ? HttpMethods.Trace
            : HttpMethods.IsConnect(method) ? HttpMethods.Connect
            : "_OTHER";

    /// <summary><c>network.protocol.version</c> from <see cref="HttpRequest.Protocol"/>; null for one not known.</summary>
    public static string? ProtocolVersion(string protocol)
        => HttpProtocol.IsHttp11(protocol) ? "1.1"
            : HttpProtocol.IsHttp2(protocol) ? "2"
            : HttpProtocol.IsHttp3(protocol) ? "3"
            : HttpProtocol.IsHttp10(protocol) ? "1.0"
            : null;

    /// <summary>Records a request the middleware answered, once its response is written.</summary>
    public static Task Timed(this PeregrineMetrics metrics, Task serving, HttpContext context, long started)
    {
        if (started == 0)
        {
            return serving;
        }

        if (serving.IsCompletedSuccessfully)
        {
            Record(metrics, context, started);
            return serving;
        }

        return TimedAsync(metrics, serving, context, started);
    }

    private static async Task TimedAsync(PeregrineMetrics metrics, Task serving, HttpContext context, long started)
    {
        try
        {
            await serving;
        }
        finally
        {
            Record(metrics, context, started);
        }
    }

    private static void Record(PeregrineMetrics metrics, HttpContext context, long started)
    {
        var request = context.Request;
        metrics.RequestDone(started, Method(request.Method), context.Response.StatusCode, request.IsHttps, ProtocolVersion(request.Protocol));
    }
}
