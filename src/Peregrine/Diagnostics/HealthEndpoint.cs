using System.Buffers;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;

namespace Peregrine.Diagnostics;

/// <summary>
/// Answers GET and HEAD on one path with the readiness of the file catalog; every other
/// request goes on to the next middleware.
/// </summary>
/// <remarks>
/// This is a readiness probe: "ready" means the first index is complete and files are being
/// served from it. There is no separate liveness answer because none is needed: a process
/// that answers this path at all, with any status, is live. Point a liveness probe at the same
/// path and accept 503 as well as 200, or use a TCP check.
/// <list type="bullet">
/// <item>200 <c>{"status":"ready","files":N,"generation":G}</c> once the first index is in force;
/// <c>generation</c> counts the indexes published so far, so it moves on every re-index.</item>
/// <item>503 <c>{"status":"starting"}</c> while the first index is being built.</item>
/// <item>503 <c>{"status":"failed"}</c> if the first index failed (the reason is in the log);
/// Peregrine then answers file requests with 503 too, and a restart is the way out.</item>
/// </list>
/// </remarks>
internal sealed class HealthEndpoint
{
    private static readonly StringValues s_contentType = "application/json";
    private static readonly byte[] s_starting = "{\"status\":\"starting\"}"u8.ToArray();
    private static readonly byte[] s_failed = "{\"status\":\"failed\"}"u8.ToArray();

    private readonly RequestDelegate _next;
    private readonly FileCatalog _catalog;
    private readonly PathString _path;

    public HealthEndpoint(RequestDelegate next, FileCatalog catalog, PathString path)
    {
        _next = next;
        _catalog = catalog;
        _path = path;
    }

    public Task Invoke(HttpContext context)
    {
        if (!EndpointRequest.IsGetOrHeadOn(context.Request, _path, out var isHead))
        {
            return _next(context);
        }

        var (status, body) = CatalogReadiness.Of(_catalog, out var snapshot) switch
        {
            Readiness.Ready => (StatusCodes.Status200OK, ReadyBody(snapshot!.FileCount, _catalog.Generation)),
            Readiness.Failed => (StatusCodes.Status503ServiceUnavailable, s_failed),
            _ => (StatusCodes.Status503ServiceUnavailable, s_starting),
        };

        return EndpointRequest.AnswerAsync(context, status, s_contentType, body, isHead);
    }

    private static byte[] ReadyBody(int files, int generation)
    {
        // Utf8JsonWriter rather than a serializer: no reflection, so the library stays trimmable.
        var buffer = new ArrayBufferWriter<byte>(64);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("status"u8, "ready"u8);
            json.WriteNumber("files"u8, files);
            json.WriteNumber("generation"u8, generation);
            json.WriteEndObject();
        }

        return buffer.WrittenSpan.ToArray();
    }
}
