using System.Buffers;
using System.Collections.Concurrent;
using System.Globalization;
using System.IO.Pipelines;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Primitives;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Logging;
using Peregrine.Metrics;
using Peregrine.Ranges;
using Peregrine.Sources;

// Send: the last stage of the flow. A request runs catalog -> negotiation -> conditional ->
// ranges -> send, and by the time it gets here the entry, the representation, its header fields
// (ResponseFields) and, for a 206, the ranges are chosen; this stage writes the framing and the body
// and counts the response. Bytes held in memory are copied into Kestrel's output without an await
// (BodySender.WriteAsync). Bytes on disk are read straight into the response's buffers
// (FileSender) from a file opened, and checked against the indexed length and time, before any
// header goes out. That file is the catalog's private copy of the published version where it
// keeps one (Catalog.VersionCopies), which no writer touches, so the previous version is sent
// whole while the original is rewritten. Read from the original (beyond the copy limit), a file
// that changed since the index is served as it is now, read whole (FreshVersion), or answered with
// a 503; one that changes while it is sent has its response aborted (ResponseAborter), never
// completed with bytes its headers do not describe.

namespace Peregrine.Send;

/// <summary>
/// Sends a file response's body for the middleware: the whole representation (200), one range
/// (206) or several (206, multipart/byteranges), from memory or from disk. Made once per
/// middleware; nothing here allocates on the in-memory path.
/// </summary>
internal sealed class BodySender
{
    // One boundary for the process: it only has to be absent from the parts' own lines, which
    // are ours, and 32 random alphanumerics make a collision with file bytes irrelevant.
    private static readonly string s_boundary = MultipartByteRanges.NewBoundary();
    private static readonly StringValues s_multipartContentType = MultipartByteRanges.ContentType(s_boundary);

    // Bodies up to this size are copied into Kestrel's output before it flushes; it bounds what
    // one request can buffer without back-pressure.
    private const int UnflushedWriteLimit = 64 * 1024;

    // Large enough for any page or asset, small enough that a burst of such reads stays cheap.
    private const int FreshReadLimit = 8 * 1024 * 1024;

    private readonly RequestDelegate _next;
    private readonly FileCatalog _catalog;
    private readonly ConfiguredHeaders _headers;
    private readonly PeregrineMetrics _metrics;
    private readonly ILogger _logger;

    // Files whose last read from disk failed (EIO and the like): a failing disk is reported once
    // per file rather than once per request, until the file reads whole again.
    private readonly ConcurrentDictionary<string, byte> _unreadable = new(StringComparer.Ordinal);

    // Reads from disk that do not return are reported while they hang.
    private readonly DiskReadWatch _diskReads;

    // next answers a file deleted since the index, as the next index will.
    public BodySender(RequestDelegate next, FileCatalog catalog, PeregrineMetrics metrics, ILogger logger)
    {
        _next = next;
        _catalog = catalog;
        _headers = catalog.Headers;
        _metrics = metrics;
        _logger = logger;
        _diskReads = new DiskReadWatch(logger);
    }

    /// <summary>200 with the whole representation; for HEAD, the fields without the body.</summary>
    // Inlined into the middleware's Serve, so the 200 answer costs what it did as Serve's own code.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public Task SendWhole(HttpContext context, CatalogEntry entry, Representation representation, ResponseFields described, bool isHead)
    {
        var response = context.Response;
        described.WriteContent(response.Headers);
        response.ContentLength = representation.Length;
        var content = representation.Content;
        _metrics.Served(StatusCodes.Status200OK, isHead ? 0 : representation.Length, content is not null, Saved(entry, representation));
        if (isHead)
        {
            return Task.CompletedTask;
        }

        if (content is not null)
        {
            return WriteAsync(response, content);
        }

        return SendFromDiskAsync(context, entry, representation, 0, representation.Length);
    }

    /// <summary>206 with one range (RFC 9110 §14.4): Content-Range names it and the whole length.</summary>
    public Task SendRange(HttpContext context, CatalogEntry entry, Representation representation, ResponseFields described, ByteRange single)
    {
        var response = context.Response;
        var headers = response.Headers;
        response.StatusCode = StatusCodes.Status206PartialContent;
        described.WriteContent(headers);
        headers.ContentRange = ContentRange(single, representation.Length);
        response.ContentLength = single.Length;
        _metrics.Served(StatusCodes.Status206PartialContent, single.Length, representation.Content is not null, 0);
        return representation.Content is { } content
            ? WriteAsync(response, content.AsMemory((int)single.Start, (int)single.Length))
            : SendFromDiskAsync(context, entry, representation, single.Start, single.Length);
    }

    /// <summary>206 with several ranges, as multipart/byteranges.</summary>
    public Task SendMultipart(HttpContext context, CatalogEntry entry, Representation representation, ResponseFields described, ReadOnlySpan<ByteRange> ranges)
    {
        // §14.6: several ranges go as multipart/byteranges; each part names its range and
        // the representation's type, and the coding applies to every part.
        var response = context.Response;
        var headers = response.Headers;
        var selected = ranges.ToArray();
        var partType = entry.ContentType.ToString();
        response.StatusCode = StatusCodes.Status206PartialContent;
        described.WriteContent(headers);
        headers.ContentType = s_multipartContentType;
        response.ContentLength = MultipartByteRanges.ComputeLength(selected, representation.Length, partType, s_boundary);
        _metrics.Served(StatusCodes.Status206PartialContent, response.ContentLength.Value, representation.Content is not null, 0);
        return SendMultipartAsync(context, entry, representation, selected, partType);
    }

    /// <summary>
    /// Writes bytes held in memory. Up to <see cref="UnflushedWriteLimit"/> the write completes
    /// synchronously and returns <see cref="Task.CompletedTask"/>: no await, no state machine.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static Task WriteAsync(HttpResponse response, ReadOnlyMemory<byte> content)
    {
        if (content.Length <= UnflushedWriteLimit)
        {
            // Left for Kestrel to flush when the response ends: headers, body and, over HTTP/2,
            // END_STREAM on the last DATA frame go out in one write (a flush here made HTTP/2
            // send an empty DATA frame of its own, one more TLS record and send per response).
            response.BodyWriter.Write(content.Span);
            return Task.CompletedTask;
        }

        var protocol = response.HttpContext.Request.Protocol;
        if (!HttpProtocol.IsHttp2(protocol) && !HttpProtocol.IsHttp3(protocol))
        {
            // HTTP/1.x: flushed as written, so that the client's pace holds it back. A connection
            // carries one response at a time, and its output pipe holds at most this body.
            var whole = response.BodyWriter.WriteAsync(content);
            return whole.IsCompletedSuccessfully ? Task.CompletedTask : whole.AsTask();
        }

        // A multiplexed connection holds as many responses as the client opens streams, each in a
        // pipe of its own until flow control lets it out: written whole, 256 streams of 417 KB
        // took 110-190 MiB of blocks, which stayed with the GC once the load had stopped
        // (docs/performance.md, "Large bodies over HTTP/2"). A piece at a time, each flushed before
        // the next is copied, a stream holds one piece, as with ASP.NET Core's own file sending,
        // which copies a file a buffer at a time.
        var pending = WritePiecesAsync(response.BodyWriter, content);
        return pending.IsCompletedSuccessfully ? Task.CompletedTask : pending.AsTask();
    }

    // Pooled state machines: a stream that waits for its client does not allocate one each time.
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private static async ValueTask WritePiecesAsync(PipeWriter writer, ReadOnlyMemory<byte> content)
    {
        while (!content.IsEmpty)
        {
            var piece = content[..Math.Min(content.Length, UnflushedWriteLimit)];
            var flushed = await writer.WriteAsync(piece);
            if (flushed.IsCompleted)
            {
                // The client is gone: the rest has nowhere to go.
                return;
            }

            content = content[piece.Length..];
        }
    }

    private static long Saved(CatalogEntry entry, Representation representation)
        => ReferenceEquals(representation, entry.Identity) ? 0 : entry.Identity.Length - representation.Length;

    private static string ContentRange(ByteRange range, long length)
        => string.Create(CultureInfo.InvariantCulture, $"bytes {range.Start}-{range.Last}/{length}");

    private async Task SendFromDiskAsync(HttpContext context, CatalogEntry entry, Representation representation, long offset, long count)
    {
        var expectedTicks = ExpectedLastWrite(entry, representation);
        using var handle = FileSender.TryOpen(representation.PhysicalPath!, representation.Length, expectedTicks);
        if (handle is null)
        {
            // The file is not the indexed version any more (or is gone) and nothing has been
            // sent. The watcher is re-indexing it; meanwhile the current version is served
            // whole if it is small enough to hold, and otherwise the answer is a plain 503
            // rather than bytes the headers do not describe.
            await ServeCurrentVersionAsync(context, entry);
            return;
        }

        using var watch = _diskReads.Start(representation.PhysicalPath!);
        try
        {
            if (!await FileSender.CopyAsync(context, handle, offset, count, representation.Length, expectedTicks, watch))
            {
                PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
                ResponseAborter.Abort(context);
            }
            else if (!_unreadable.IsEmpty)
            {
                _unreadable.TryRemove(representation.PhysicalPath!, out _);
            }
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            // The client went away; there is no one left to answer.
        }
        catch (IOException ex) when (!context.RequestAborted.IsCancellationRequested)
        {
            ReadFailed(context, representation, ex);
        }
    }

    /// <summary>
    /// The disk failed under a response (an I/O error, not a change to the file): the response is
    /// cut short like any other that cannot be completed, never finished with wrong bytes, and
    /// the next request reads the file afresh.
    /// </summary>
    private void ReadFailed(HttpContext context, Representation representation, IOException ex)
    {
        if (_unreadable.TryAdd(representation.PhysicalPath!, 0))
        {
            PeregrineLog.ReadFailedWhileSending(_logger, representation.PhysicalPath!, ex.Message);
        }

        ResponseAborter.Abort(context);
    }

    private async Task SendMultipartAsync(HttpContext context, CatalogEntry entry, Representation representation, ByteRange[] ranges, string partType)
    {
        var writer = context.Response.BodyWriter;
        var headerSize = MultipartByteRanges.MaxPartHeaderLength(partType, s_boundary);
        var expectedTicks = ExpectedLastWrite(entry, representation);
        using var handle = representation.Content is null
            ? FileSender.TryOpen(representation.PhysicalPath!, representation.Length, expectedTicks)
            : null;
        if (representation.Content is null && handle is null)
        {
            await ServeCurrentVersionAsync(context, entry);
            return;
        }

        using var watch = handle is null ? null : _diskReads.Start(representation.PhysicalPath!);

        for (var i = 0; i < ranges.Length; i++)
        {
            var range = ranges[i];
            var written = MultipartByteRanges.WritePartHeader(writer.GetSpan(headerSize), i == 0, range, representation.Length, partType, s_boundary);
            writer.Advance(written);
            if (representation.Content is { } content)
            {
                await writer.WriteAsync(content.AsMemory((int)range.Start, (int)range.Length), context.RequestAborted);
            }
            else
            {
                bool copied;
                try
                {
                    copied = await FileSender.CopyAsync(context, handle!, range.Start, range.Length, representation.Length, expectedTicks, watch!);
                }
                catch (IOException ex) when (!context.RequestAborted.IsCancellationRequested)
                {
                    ReadFailed(context, representation, ex);
                    return;
                }

                if (!copied)
                {
                    PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
                    ResponseAborter.Abort(context);
                    return;
                }
            }
        }

        var closing = MultipartByteRanges.WriteClosing(writer.GetSpan(headerSize), s_boundary);
        writer.Advance(closing);
        await writer.FlushAsync(context.RequestAborted);
    }

    /// <summary>The identity file must keep its indexed mtime; sidecar and cache files are checked by length.</summary>
    private static long? ExpectedLastWrite(CatalogEntry entry, Representation representation)
        => ReferenceEquals(representation, entry.Identity) ? entry.LastWriteTicks : null;

    /// <summary>
    /// Serves the file as it is now, not as indexed: read whole into memory and hashed, so the
    /// body and its ETag, length and date describe one version. Only for the moments between a
    /// change and its re-index, and only for files up to <see cref="FreshReadLimit"/>.
    /// </summary>
    private async Task ServeCurrentVersionAsync(HttpContext context, CatalogEntry entry)
    {
        _catalog.NoticeChanged();

        // A file a writer is still at has no whole current version: its bytes on disk may be
        // half old and half new, however still they hold while read. 503 until it is closed.
        var missing = false;
        var fresh = _catalog.IsBeingWritten(entry.RelativePath) ? null : FreshVersion.TryRead(entry.PhysicalPath, FreshReadLimit, entry.LastWriteTicks, _catalog.HasCloseEvents ? _catalog.Options.Watch.SettleTime : TimeSpan.Zero, out missing);
        if (missing)
        {
            // Deleted since the index: answer as the next index will.
            context.Response.Clear();
            await _next(context);
            return;
        }

        if (fresh is null || _catalog.IsBeingWritten(entry.RelativePath))
        {
            FileNotAsIndexed(context, entry);
            return;
        }

        var response = context.Response;
        var headers = response.Headers;

        // The Cache-Control chosen for this request (an SPA fallback's no-cache, say) survives
        // the clear. The fields are the identity representation's, with this version's validators.
        var cacheControl = headers.CacheControl;
        response.Clear();
        var described = ResponseFields.For(entry, entry.Identity, _headers).WithValidators(fresh.ETag, fresh.LastModified.ToString("r"));
        described.WriteEntity(context.Request, headers, cacheControl);
        described.WriteContent(headers);
        response.ContentLength = fresh.Content.Length;
        _metrics.Served(StatusCodes.Status200OK, fresh.Content.Length, fromMemory: false, 0);
        await response.BodyWriter.WriteAsync(fresh.Content, context.RequestAborted);
    }

    private void FileNotAsIndexed(HttpContext context, CatalogEntry entry)
    {
        PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
        _catalog.NoticeChanged();
        var response = context.Response;
        response.Clear();
        response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        response.Headers.RetryAfter = "1";
        response.Headers.CacheControl = "no-store";
        response.ContentLength = 0;
        _metrics.Served(StatusCodes.Status503ServiceUnavailable, 0, fromMemory: false, 0);
    }
}
