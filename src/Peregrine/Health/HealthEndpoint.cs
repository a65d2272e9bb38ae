using System.Buffers;
using System.Text.Json;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Sources;

namespace Peregrine.Health;

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
/// <item>200 <c>{"status":"ready","files":N,"generation":G,"compression":{...}}</c> once the first
/// index is in force; <c>generation</c> counts the indexes published so far, so it moves on every
/// re-index. <c>compression</c> is progress, not readiness: <c>pending</c> files still wait for
/// their first variants (served unencoded until then), <c>upgrading</c> ones are served with
/// fast-pass variants and wait for the final pass, <c>done</c> counts files finished at final
/// quality, and <c>final</c> is true once both passes have nothing left.</item>
/// <item>503 <c>{"status":"starting"}</c> while the first index is being built.</item>
/// <item>Serving from a bucket, each body also has <c>"bucket":{...}</c>: whether the bucket can be
/// read now, the release in force, the last sync, and the last error, written by the bucket
/// package (<see cref="ICopiedSource.WriteHealth"/>).</item>
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
    private readonly Compressor _compressor;
    private readonly PathString _path;
    private readonly ICopiedSource? _copied;

    public HealthEndpoint(RequestDelegate next, FileCatalog catalog, Compressor compressor, PathString path, ICopiedSource? copied = null)
    {
        _next = next;
        _catalog = catalog;
        _compressor = compressor;
        _path = path;
        _copied = copied;
    }

    public Task Invoke(HttpContext context)
    {
        if (!EndpointRequest.IsGetOrHeadOn(context.Request, _path, out var isHead))
        {
            return _next(context);
        }

        var (status, body) = CatalogReadiness.Of(_catalog, out var snapshot) switch
        {
            Readiness.Ready => (StatusCodes.Status200OK, ReadyBody(snapshot!.FileCount, _catalog.Generation, _compressor.Totals(), _copied)),
            Readiness.Failed => (StatusCodes.Status503ServiceUnavailable, s_failed),
            _ => (StatusCodes.Status503ServiceUnavailable, _copied is null ? s_starting : StartingBody(_copied)),
        };

        return EndpointRequest.AnswerAsync(context, status, s_contentType, body, isHead);
    }

    private static byte[] ReadyBody(int files, int generation, CompressionTotals compression, ICopiedSource? copied)
    {
        // Utf8JsonWriter rather than a serializer: no reflection, so the library stays trimmable.
        var buffer = new ArrayBufferWriter<byte>(64);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("status"u8, "ready"u8);
            json.WriteNumber("files"u8, files);
            json.WriteNumber("generation"u8, generation);
            json.WriteStartObject("compression"u8);
            json.WriteNumber("pending"u8, compression.Pending);
            json.WriteNumber("upgrading"u8, compression.Upgrading);
            json.WriteNumber("done"u8, compression.Done);
            json.WriteBoolean("final"u8, compression.Final);
            json.WriteEndObject();
            copied?.WriteHealth(json);

            json.WriteEndObject();
        }

        return buffer.WrittenSpan.ToArray();
    }

    /// <summary>The 503 body before the first copy: <c>{"status":"starting","bucket":{...}}</c>.</summary>
    private static byte[] StartingBody(ICopiedSource copied)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("status"u8, "starting"u8);
            copied.WriteHealth(json);
            json.WriteEndObject();
        }

        return buffer.WrittenSpan.ToArray();
    }
}
