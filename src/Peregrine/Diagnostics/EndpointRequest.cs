using Microsoft.AspNetCore.Http;

namespace Peregrine.Diagnostics;

internal static class EndpointRequest
{
    /// <summary>
    /// True for a GET or HEAD on <paramref name="path"/> (compared as PathString does, ignoring
    /// case): the requests the health and metrics endpoints answer. Everything else passes on.
    /// </summary>
    public static bool IsGetOrHeadOn(HttpRequest request, PathString path, out bool isHead)
    {
        isHead = HttpMethods.IsHead(request.Method);
        return request.Path.Equals(path) && (isHead || HttpMethods.IsGet(request.Method));
    }
}
