using System.Buffers;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;
using Peregrine.Cors;
using Peregrine.Diagnostics;
using Peregrine.Conditional;
using Peregrine.Negotiation;
using Peregrine.Send;

namespace Peregrine;

/// <summary>
/// Serves the files of the catalog. The flow of a request: resolve (path → entry) → method →
/// select (representation) → preconditions (304/412) → ranges (206/416) → send. Everything a response needs was
/// computed when the catalog was built; this path looks up, compares and writes.
/// </summary>
internal sealed partial class PeregrineMiddleware
{
    private static readonly StringValues s_allow = "GET, HEAD";
    private static readonly StringValues s_noCache = "no-cache";

    private readonly RequestDelegate _next;
    private readonly FileCatalog _catalog;
    private readonly PeregrineMetrics _metrics;
    private readonly ILogger _logger;
    private readonly string _requestPath;

    /// <summary>The mount point, escaped for a URI, for redirects and listing links.</summary>
    private readonly string _requestPathUri;

    public PeregrineMiddleware(RequestDelegate next, FileCatalog catalog, PeregrineMetrics metrics, ILoggerFactory loggerFactory)
    {
        _next = next;
        _catalog = catalog;
        _metrics = metrics;
        _logger = loggerFactory.CreateLogger("Peregrine");
        var options = catalog.Options;
        _requestPath = options.RequestPath.Value ?? "";
        _requestPathUri = options.RequestPath.ToUriComponent();
        _headers = catalog.Headers;
        _spaFallback = options.SpaFallback is { } spa ? "/" + spa : null;
        catalog.Start();
    }

    private readonly ConfiguredHeaders _headers;
    private readonly string? _spaFallback;

    public Task Invoke(HttpContext context)
    {
        var snapshot = _catalog.Current;
        if (snapshot is null)
        {
            return InvokeWhenReady(context);
        }

        // Kestrel has already percent-decoded the path (all but %2F) and removed dot segments.
        // The catalog holds only files found under the root, so whatever the path says, the
        // answer is an indexed file or the next middleware: no request path reaches the disk.
        if (!TryGetKey(context.Request.Path.Value, out var key))
        {
            return _next(context);
        }

        if (!snapshot.TryFind(key, out var entry))
        {
            return _spaFallback is not null && IsNavigation(context.Request, key) && snapshot.TryFind(_spaFallback, out var fallback)
                ? Serve(context, fallback, cacheControlOverride: s_noCache)
                : _next(context);
        }

        return Serve(context, entry);
    }

    /// <summary>
    /// A browser navigation to a client-side route: GET or HEAD, accepting HTML, for a path
    /// whose last segment has no extension. Asset requests (<c>/app.3f9a1c.js</c>) are not, so
    /// a missing asset is still a 404 rather than an HTML page with a 200.
    /// </summary>
    private static bool IsNavigation(HttpRequest request, ReadOnlySpan<char> path)
    {
        if (!HttpMethods.IsGet(request.Method) && !HttpMethods.IsHead(request.Method))
        {
            return false;
        }

        var lastSegment = path[(path.LastIndexOf('/') + 1)..];
        if (lastSegment.Contains('.'))
        {
            return false;
        }

        foreach (var accept in request.Headers.Accept)
        {
            if (accept is not null && accept.Contains("text/html", StringComparison.OrdinalIgnoreCase))
            {
                return true;
            }
        }

        return false;
    }

    private bool TryGetKey(string? path, out ReadOnlySpan<char> key)
    {
        key = path;
        if (path is null)
        {
            return false;
        }

        if (_requestPath.Length != 0)
        {
            // Segment-wise, case-insensitive prefix match, as PathString.StartsWithSegments,
            // but without allocating the remainder.
            if (!path.StartsWith(_requestPath, StringComparison.OrdinalIgnoreCase)
                || (path.Length > _requestPath.Length && path[_requestPath.Length] != '/'))
            {
                return false;
            }

            key = path.AsSpan(_requestPath.Length);
        }

        return true;
    }

    private async Task InvokeWhenReady(HttpContext context)
    {
        try
        {
            await _catalog.Ready.WaitAsync(context.RequestAborted);
        }
        catch (OperationCanceledException)
        {
            return;
        }
        catch (Exception)
        {
            // The index failed and was logged when it did; say so rather than pretend 404.
            context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
            return;
        }

        await Invoke(context);
    }

    // cacheControlOverride: Cache-Control for this request instead of the entry's (an SPA fallback's).
    private Task Serve(HttpContext context, CatalogEntry entry, StringValues cacheControlOverride = default)
    {
        var request = context.Request;
        var response = context.Response;
        var method = request.Method;
        var isHead = HttpMethods.IsHead(method);
        if (!isHead && !HttpMethods.IsGet(method))
        {
            if (_headers.Cors.IsPreflight(request))
            {
                _headers.Cors.AnswerPreflight(request, response);
                _metrics.Served(StatusCodes.Status204NoContent, 0, fromMemory: true, 0);
                return Task.CompletedTask;
            }

            // RFC 9110 §15.5.6: a 405 lists the methods the resource supports.
            response.StatusCode = StatusCodes.Status405MethodNotAllowed;
            response.Headers.Allow = s_allow;
            response.ContentLength = 0;
            _metrics.Served(StatusCodes.Status405MethodNotAllowed, 0, fromMemory: true, 0);
            return Task.CompletedTask;
        }

        if (entry.IsRedirect)
        {
            return RedirectToDirectory(context, entry);
        }

        if (entry.Listing is { } listing)
        {
            return ServeListing(context, entry, listing, isHead);
        }

        var headers = response.Headers;
        var representation = RepresentationSelector.Select(entry, request.Headers.AcceptEncoding);
        var described = FileResponse.For(entry, representation, _headers);
        described.WriteEntity(headers, cacheControlOverride);
        if (_headers.Cors.VariesByOrigin)
        {
            _headers.Cors.AddResponseHeaders(request, headers);
        }

        // Preconditions compare against the representation that would be sent (§13.1).
        switch (ConditionalRequest.Evaluate(request.Headers, representation.ETag, entry.LastModifiedHeader, entry.LastModified))
        {
            case PreconditionResult.NotModified:
                response.StatusCode = StatusCodes.Status304NotModified;
                _metrics.Served(StatusCodes.Status304NotModified, 0, fromMemory: true, 0);
                return Task.CompletedTask;
            case PreconditionResult.Failed:
                response.StatusCode = StatusCodes.Status412PreconditionFailed;
                response.ContentLength = 0;
                _metrics.Served(StatusCodes.Status412PreconditionFailed, 0, fromMemory: true, 0);
                return Task.CompletedTask;
        }

        // §14.2: GET is the only method with range semantics; HEAD ignores Range.
        var range = request.Headers.Range;
        if (range.Count != 0 && !isHead)
        {
            return ServeRanges(context, entry, representation, described, range);
        }

        described.WriteContent(headers);
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

    private static long Saved(CatalogEntry entry, Representation representation)
        => ReferenceEquals(representation, entry.Identity) ? 0 : entry.Identity.Length - representation.Length;

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static Task WriteAsync(HttpResponse response, ReadOnlyMemory<byte> content)
    {
        if (content.Length <= UnflushedWriteLimit)
        {
            // Left for Kestrel to flush when the response ends: headers, body and, over HTTP/2,
            // END_STREAM on the last DATA frame go out in one write (a flush here made HTTP/2
            // send an empty DATA frame of its own, one more TLS record and send per response).
            response.BodyWriter.Write(content.Span);
            return Task.CompletedTask;
        }

        // Larger bodies are flushed as written, so that the client's pace holds them back.
        var pending = response.BodyWriter.WriteAsync(content);
        return pending.IsCompletedSuccessfully ? Task.CompletedTask : pending.AsTask();
    }

    // Bodies up to this size are copied into Kestrel's output before it flushes; it bounds what
    // one request can buffer without back-pressure.
    private const int UnflushedWriteLimit = 64 * 1024;

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

        try
        {
            if (!await FileSender.CopyAsync(context, handle, offset, count, representation.Length, expectedTicks))
            {
                PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
                ResponseAborter.Abort(context);
            }
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            // The client went away; there is no one left to answer.
        }
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
        _catalog.RequestRefresh();
        var fresh = FreshVersion.TryRead(entry.PhysicalPath, FreshReadLimit, out var missing);
        if (missing)
        {
            // Deleted since the index: answer as the next index will.
            context.Response.Clear();
            await _next(context);
            return;
        }

        if (fresh is null)
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
        var described = FileResponse.For(entry, entry.Identity, _headers);
        described.WriteEntity(headers, cacheControl);
        headers.ETag = fresh.ETag;
        headers.LastModified = fresh.LastModified.ToString("r");
        if (_headers.Cors.VariesByOrigin)
        {
            _headers.Cors.AddResponseHeaders(context.Request, headers);
        }

        described.WriteContent(headers);
        response.ContentLength = fresh.Content.Length;
        _metrics.Served(StatusCodes.Status200OK, fresh.Content.Length, fromMemory: false, 0);
        await response.BodyWriter.WriteAsync(fresh.Content, context.RequestAborted);
    }

    // Large enough for any page or asset, small enough that a burst of such reads stays cheap.
    private const int FreshReadLimit = 8 * 1024 * 1024;

    private void FileNotAsIndexed(HttpContext context, CatalogEntry entry)
    {
        PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
        _catalog.RequestRefresh();
        var response = context.Response;
        response.Clear();
        response.StatusCode = StatusCodes.Status503ServiceUnavailable;
        response.Headers.RetryAfter = "1";
        response.Headers.CacheControl = "no-store";
        response.ContentLength = 0;
        _metrics.Served(StatusCodes.Status503ServiceUnavailable, 0, fromMemory: false, 0);
    }

    private Task RedirectToDirectory(HttpContext context, CatalogEntry entry)
    {
        // RFC 9110 §15.4.2: 301 to the slash-terminated path so that relative links in the
        // index document resolve; the query string is kept.
        var request = context.Request;
        var location = request.PathBase.ToUriComponent()
            + _requestPathUri
            + entry.RedirectPath
            + request.QueryString.ToUriComponent();
        context.Response.StatusCode = StatusCodes.Status301MovedPermanently;
        context.Response.Headers.Location = location;
        context.Response.ContentLength = 0;
        _metrics.Served(StatusCodes.Status301MovedPermanently, 0, fromMemory: true, 0);
        return Task.CompletedTask;
    }
}
