using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;

namespace Peregrine.Metrics;

internal static class EndpointRequest
{
    private static readonly StringValues s_noStore = "no-store";

    /// <summary>
    /// True for a GET or HEAD on <paramref name="path"/> (compared as PathString does, ignoring
    /// case): the requests the health and metrics endpoints answer. Everything else passes on.
    /// </summary>
    public static bool IsGetOrHeadOn(HttpRequest request, PathString path, out bool isHead)
    {
        isHead = HttpMethods.IsHead(request.Method);
        return request.Path.Equals(path) && (isHead || HttpMethods.IsGet(request.Method));
    }

    /// <summary>
    /// Sends <paramref name="body"/> (headers only for HEAD) with <c>Cache-Control: no-store</c>:
    /// a probe or a scrape must see the state as it is now, never a cached copy (a cached
    /// "starting" would never clear).
    /// </summary>
    public static Task AnswerAsync(HttpContext context, int status, StringValues contentType, byte[] body, bool isHead)
    {
        var response = context.Response;
        response.StatusCode = status;
        response.Headers.ContentType = contentType;
        response.Headers.CacheControl = s_noStore;
        response.ContentLength = body.Length;
        return isHead ? Task.CompletedTask : response.Body.WriteAsync(body, context.RequestAborted).AsTask();
    }
}
