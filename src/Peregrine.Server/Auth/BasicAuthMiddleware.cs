using Microsoft.Extensions.Primitives;

namespace Peregrine.Server.Auth;

/// <summary>
/// Basic authentication for the whole site (<c>--basic-auth</c>, <c>--basic-auth-file</c>):
/// a request without credentials that pass gets 401 and the challenge (RFC 7617 §2), before
/// it reaches the files or the metrics. Health stays open, as orchestrators probe it without
/// credentials; it tells nothing but readiness.
/// </summary>
internal sealed class BasicAuthMiddleware
{
    private static readonly StringValues s_challenge = $"Basic realm=\"{BasicAuthenticator.Realm}\", charset=\"UTF-8\"";
    private static readonly StringValues s_noStore = "no-store";

    private readonly RequestDelegate _next;
    private readonly BasicAuthenticator _authenticator;

    // Full checks at once, at most one per core: a stream of wrong guesses costs CPU but
    // cannot take every thread, and requests with remembered credentials never wait here.
    private readonly SemaphoreSlim _checks = new(Environment.ProcessorCount);

    public BasicAuthMiddleware(RequestDelegate next, BasicAuthenticator authenticator)
    {
        _next = next;
        _authenticator = authenticator;
    }

    public Task Invoke(HttpContext context)
    {
        var authorization = context.Request.Headers.Authorization;
        return _authenticator.IsRemembered(authorization) ? _next(context) : CheckAsync(context, authorization);
    }

    private async Task CheckAsync(HttpContext context, StringValues authorization)
    {
        var passed = false;
        if (authorization.Count != 0)
        {
            try
            {
                await _checks.WaitAsync(context.RequestAborted);
            }
            catch (OperationCanceledException)
            {
                // The client went away while waiting.
                return;
            }

            try
            {
                // bcrypt takes tens of milliseconds by design: off the socket thread, which
                // inline I/O would otherwise hold for every connection it serves.
                passed = await Task.Run(() => _authenticator.Verify(authorization));
            }
            finally
            {
                _checks.Release();
            }
        }

        if (passed)
        {
            await _next(context);
            return;
        }

        var response = context.Response;
        response.StatusCode = StatusCodes.Status401Unauthorized;
        response.Headers.WWWAuthenticate = s_challenge;
        response.Headers.CacheControl = s_noStore;
        response.ContentLength = 0;
    }
}
