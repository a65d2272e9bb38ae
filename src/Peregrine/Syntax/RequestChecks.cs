using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Extensions.Primitives;

namespace Peregrine.Syntax;

/// <summary>
/// The request checks of RFC 9110 and RFC 9112 that Kestrel's parser leaves to the application:
/// a Host that is not <c>uri-host [ ":" port ]</c> (Kestrel checks characters only, so
/// <c>[ab..cd::ef98:0:7654:321]</c> passes it), a target that is not valid (see
/// <see cref="TargetSyntax"/>), and CONNECT, which an origin server does not implement. Run
/// on each request before it is answered: by the standalone server first of all, by
/// <c>UsePeregrine()</c> for the paths it serves. Allocation-free. Kestrel's own checks, and
/// what Peregrine answers ahead of them, are in docs/server.md ("Requests the RFCs refuse").
/// </summary>
internal static class RequestChecks
{
    private static readonly StringValues s_allow = "GET, HEAD";
    private static readonly StringValues s_close = "close";

    /// <summary>0 when the request may be answered; otherwise the status to refuse it with.</summary>
    public static int Refusal(HttpContext context)
    {
        var request = context.Request;

        // RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status code to any
        // HTTP/1.1 request message that ... contains ... a Host header field with an invalid
        // field value." An absolute-form target's authority has replaced it by now (Kestrel,
        // with AllowHostHeaderOverride; RFC 9112 §3.2.2), and for HTTP/2 it is :authority.
        var host = request.Headers.Host;
        if (host.Count == 1 && HostSyntax.Classify(host.ToString().AsSpan()) == HostForm.Invalid)
        {
            return StatusCodes.Status400BadRequest;
        }

        var target = context.Features.Get<IHttpRequestFeature>()?.RawTarget;
        if (string.IsNullOrEmpty(target))
        {
            return 0;
        }

        if (HttpMethods.IsConnect(request.Method) && IsHttp1(request.Protocol))
        {
            // RFC 9112 §3.2.3: CONNECT's target is authority-form and nothing else; RFC 9110
            // §9.3.6: an origin server that does not tunnel says so (405, with Allow).
            return HostSyntax.IsAuthorityForm(target.AsSpan()) ? StatusCodes.Status405MethodNotAllowed : StatusCodes.Status400BadRequest;
        }

        var valid = target[0] switch
        {
            '/' => TargetSyntax.IsValid(target.AsSpan()),
            '*' => true,
            _ => TargetSyntax.IsValid(TargetSyntax.PathOfAbsoluteForm(target)),
        };
        return valid ? 0 : StatusCodes.Status400BadRequest;
    }

    /// <summary>
    /// Answers with <paramref name="status"/> and no body, as Kestrel answers a request it
    /// refuses: over HTTP/1.x the connection then closes, since a client that sent this may not
    /// frame what follows as the server would.
    /// </summary>
    public static Task Refuse(HttpContext context, int status)
    {
        var response = context.Response;
        response.StatusCode = status;
        response.ContentLength = 0;
        if (status == StatusCodes.Status405MethodNotAllowed)
        {
            // RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
            response.Headers.Allow = s_allow;
        }

        if (IsHttp1(context.Request.Protocol))
        {
            response.Headers.Connection = s_close;
        }

        return Task.CompletedTask;
    }

    private static bool IsHttp1(string protocol) => HttpProtocol.IsHttp11(protocol) || HttpProtocol.IsHttp10(protocol);
}
