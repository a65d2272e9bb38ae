using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;

namespace Peregrine.Send;

internal static class ResponseAborter
{
    /// <summary>
    /// Ends a response whose body can no longer be sent in full. Over HTTP/1.1 the connection
    /// is closed before Content-Length bytes arrive, and over HTTP/2 the stream is reset, so
    /// the client knows the body is incomplete rather than taking short bytes as the file.
    /// </summary>
    public static void Abort(HttpContext context)
    {
        var reset = context.Features.Get<IHttpResetFeature>();
        if (reset is not null)
        {
            reset.Reset(errorCode: 2); // INTERNAL_ERROR, RFC 9113 §7
            return;
        }

        context.Abort();
    }
}
