using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Negotiation;
using Peregrine.Send;

namespace Peregrine.Fallback;

/// <summary>
/// The 404 page (<see cref="PeregrineOptions.NotFoundPage"/>): for a navigation that matched
/// no file, the next middleware answers first, and only an empty 404 (nothing written yet) gets
/// the page as its body. An application's own routes after <c>UsePeregrine()</c>, and any 404
/// that already has a body, are left alone.
/// </summary>
/// <remarks>
/// What goes with it follows nginx's <c>error_page</c> and Caddy's <c>handle_errors</c>: the
/// status stays 404, and the page's validators are not sent (no ETag, no Last-Modified) and
/// request preconditions and ranges are ignored, so that no cache can turn the page into a 304
/// or a 206, or keep it as if it were the missing resource's content. <c>Cache-Control:
/// no-cache</c>, so that a page published later at this address is seen at once. Configured
/// headers (a Content-Security-Policy, say) and CORS apply as to any file; the Content-Encoding
/// is negotiated as for any file. Where the root has no such file and
/// <see cref="PeregrineOptions.BuiltInNotFoundPage"/> is set (the standalone server), a small
/// page made once here goes in its place, with the same fields and no Content-Encoding.
/// </remarks>
internal sealed class NotFoundPage
{
    private static readonly StringValues s_htmlType = "text/html; charset=utf-8";

    // No script, style or external resource: it renders the same under any Content-Security-Policy
    // the site configures. The path is not echoed, so nothing in the request reaches the page.
    private static readonly byte[] s_builtIn = System.Text.Encoding.UTF8.GetBytes(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        + "<title>404 Not Found</title></head>\n<body>\n<h1>404 Not Found</h1>\n<p>There is no page at this address.</p>\n</body>\n</html>\n");

    // A page too large for memory is read whole per request, up to this, and sent; beyond it
    // the 404 stays empty. A 404 page is a few kilobytes.
    private const int DiskReadLimit = 1024 * 1024;

    private readonly string _path;
    private readonly FileCatalog _catalog;
    private readonly ConfiguredHeaders _headers;
    private readonly PeregrineMetrics _metrics;
    private readonly bool _builtIn;

    // The page's fields for each of its representations, made on first use; they go with the
    // snapshot that holds the representation. The built-in page's are made once.
    private readonly ConditionalWeakTable<Representation, ResponseFields> _fields = [];
    private readonly ResponseFields _builtInFields;

    public NotFoundPage(string file, FileCatalog catalog, PeregrineMetrics metrics)
    {
        _path = "/" + file;
        _catalog = catalog;
        _headers = catalog.Headers;
        _metrics = metrics;
        _builtIn = catalog.Options.BuiltInNotFoundPage;
        _builtInFields = ResponseFields.ForErrorPage(s_htmlType, StringValues.Empty, _headers.Vary, _headers);
    }

    /// <summary>The page sent when the root has none and the built-in one is on.</summary>
    internal static ReadOnlyMemory<byte> BuiltIn => s_builtIn;

    public async Task AfterNextAsync(HttpContext context, RequestDelegate next)
    {
        await next(context);
        var response = context.Response;
        if (response.StatusCode != StatusCodes.Status404NotFound || response.HasStarted || _catalog.Current is not { } snapshot)
        {
            return;
        }

        var request = context.Request;
        if (!snapshot.TryFindFile(_path, out var page) || !page.IsFile)
        {
            if (_builtIn)
            {
                Write(_builtInFields, request, response, s_builtIn.Length);
                var isHeadRequest = HttpMethods.IsHead(request.Method);
                _metrics.Served(StatusCodes.Status404NotFound, isHeadRequest ? 0 : s_builtIn.Length, fromMemory: true, 0);
                if (!isHeadRequest)
                {
                    await BodySender.WriteAsync(response, s_builtIn);
                }
            }

            return;
        }

        var representation = RepresentationSelector.Select(page, request.Headers.AcceptEncoding);
        var content = representation.Content;
        if (content is null)
        {
            // Not in memory: the identity bytes as the file is now.
            representation = page.Identity;
            // Any whole version will do (no indexed time to match: -1), but none a writer is at.
            content = _catalog.IsBeingWritten(page.RelativePath)
                ? null
                : FreshVersion.TryRead(page.PhysicalPath, DiskReadLimit, indexedTicks: -1, refuseYoungerThan: TimeSpan.Zero, out _)?.Content;
            if (content is null)
            {
                return;
            }
        }

        if (!_fields.TryGetValue(representation, out var fields))
        {
            fields = ResponseFields.ForErrorPage(page.ContentType, representation.ContentEncoding, _headers.VaryFor(page.Negotiable), _headers);
            _fields.AddOrUpdate(representation, fields);
        }

        Write(fields, request, response, content.Length);
        var isHead = HttpMethods.IsHead(request.Method);
        _metrics.Served(StatusCodes.Status404NotFound, isHead ? 0 : content.Length, fromMemory: representation.Content is not null,
            ReferenceEquals(representation, page.Identity) ? 0 : page.Identity.Length - representation.Length);
        if (!isHead)
        {
            await BodySender.WriteAsync(response, content);
        }
    }

    /// <summary>The fields of either page (<see cref="ResponseFields.ForErrorPage"/>), CORS as for a file, and its length.</summary>
    private static void Write(ResponseFields fields, HttpRequest request, HttpResponse response, long length)
    {
        var headers = response.Headers;
        fields.WriteEntity(request, headers);
        fields.WriteContent(headers);
        response.ContentLength = length;
    }
}
