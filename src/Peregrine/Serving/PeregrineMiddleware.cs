using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Primitives;
using Peregrine.Conditional;
using Peregrine.Fallback;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Instances;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Negotiation;
using Peregrine.Send;
using Peregrine.Syntax;

namespace Peregrine.Serving;

/// <summary>
/// Serves the files of the catalog. <see cref="Invoke"/> and <see cref="Serve"/> run the stages
/// in order, each marked where it runs: key (mount point) → find (Indexing) → method →
/// redirect or listing (Listing) → negotiate (Negotiation) → preconditions (Conditional, 304/412) →
/// ranges (Ranges, 206/416) → send (Send). Everything a response needs was computed when the
/// catalog was built; this path looks up, compares and writes.
/// </summary>
internal sealed partial class PeregrineMiddleware
{
    private static readonly StringValues s_allow = "GET, HEAD";
    private static readonly StringValues s_noCache = "no-cache";

    private readonly RequestDelegate _next;
    private readonly FileCatalog _catalog;
    private readonly ContentSource _source;
    private readonly PeregrineMetrics _metrics;
    private readonly BodySender _sender;
    private readonly ConfiguredHeaders _headers;
    private readonly string _requestPath;
    private readonly string? _spaFallback;
    private readonly NotFoundPage? _notFoundPage;
    private readonly Action<PeregrineResponseContext>? _onPrepareResponse;
    private readonly StaticWebAssets.AssetRouteTable _routes;

    /// <summary>The mount point, escaped for a URI, for redirects and listing links.</summary>
    private readonly string _requestPathUri;

    public PeregrineMiddleware(RequestDelegate next, FileCatalog catalog, ContentSource source, PeregrineMetrics metrics, ILoggerFactory loggerFactory)
    {
        _next = next;
        _catalog = catalog;
        _source = source;
        _metrics = metrics;
        _sender = new BodySender(next, catalog, metrics, loggerFactory.CreateLogger("Peregrine"));
        var options = catalog.Options;
        _requestPath = options.RequestPath.Value ?? "";
        _requestPathUri = options.RequestPath.ToUriComponent();
        _headers = catalog.Headers;
        _spaFallback = options.SpaFallback is { } spa ? "/" + spa : null;
        _notFoundPage = options.NotFoundPage is { } page ? new NotFoundPage(page, catalog, metrics) : null;
        _onPrepareResponse = options.OnPrepareResponse;
        _routes = options.Routes;
        source.Start(catalog);
    }

    /// <summary>
    /// The middleware of one instance, with its compressor made first so that it follows every
    /// snapshot; indexing starts when the middleware is made.
    /// </summary>
    internal static Func<RequestDelegate, RequestDelegate> Create(IServiceProvider services, string name, string caller, out PeregrineOptions options)
    {
        var (catalog, _) = PeregrineInstances.Resolve(services, name, caller);
        var loggerFactory = services.GetRequiredService<ILoggerFactory>();
        var metrics = services.GetRequiredService<PeregrineMetrics>();
        var source = PeregrineInstances.SourceOf(services, name);
        options = catalog.Options;

        // Constructed directly rather than through UseMiddleware<T>: no reflection, so the
        // library stays trimmable and Native AOT-compatible.
        return next => new PeregrineMiddleware(next, catalog, source, metrics, loggerFactory).Invoke;
    }

    public Task Invoke(HttpContext context)
    {
        var snapshot = _catalog.Current;
        if (snapshot is null)
        {
            return InvokeWhenReady(context);
        }

        // :: key
        // Kestrel has already percent-decoded the path (all but %2F) and removed dot segments.
        // The catalog holds only files found under the root, so whatever the path says, the
        // answer is an indexed file or the next middleware: no request path reaches the disk.
        var started = _metrics.RequestStarted();
        if (!TryGetKey(context.Request.Path.Value, out var key))
        {
            return _next(context);
        }

        // :: request (Syntax): what Kestrel let through and RFC 9110/9112 refuse
        if (RequestChecks.Refusal(context) is var refusal and not 0)
        {
            return RequestChecks.Refuse(context, refusal);
        }

        // :: find (Indexing), or for a navigation (Fallback) the SPA's shell or the 404 page
        // A route of the static web assets manifest in another case (/CSS/Site.css) is that
        // route, as endpoint routing finds it for MapStaticAssets (AssetRouteTable.TryFindRoute).
        if (!snapshot.TryFind(key, out var entry) && !(_routes.TryFindRoute(key, out var route) && snapshot.TryFind(route, out entry)))
        {
            if ((_spaFallback is null && _notFoundPage is null) || !Navigation.Is(context.Request))
            {
                return _next(context);
            }

            return _spaFallback is not null && !Navigation.NamesAFile(key) && snapshot.TryFindFile(_spaFallback, out var fallback)
                ? _metrics.Timed(Serve(context, fallback, cacheControlOverride: s_noCache), context, started)
                : _notFoundPage?.AfterNextAsync(context, _next) ?? _next(context);
        }

        return _metrics.Timed(Serve(context, entry), context, started);
    }

    // cacheControlOverride: Cache-Control for this request instead of the entry's (an SPA fallback's).
    private Task Serve(HttpContext context, CatalogEntry entry, StringValues cacheControlOverride = default)
    {
        var request = context.Request;
        var response = context.Response;

        // :: method
        var method = request.Method;
        var isHead = HttpMethods.IsHead(method);
        if (!isHead && !HttpMethods.IsGet(method))
        {
            return AnswerOtherMethod(request, response);
        }

        // :: redirect or listing (Listing), for folder entries
        if (entry.IsRedirect)
        {
            return RedirectToDirectory(context, entry);
        }

        if (entry.Listing is { } listing)
        {
            return ServeListing(context, entry, listing, isHead);
        }

        // :: negotiate (Negotiation): the representation and the fields that describe it
        var headers = response.Headers;
        // A delta against the dictionary the client holds (RFC 9842) wins over the ordinary coding.
        var ordinary = RepresentationSelector.Select(entry, request.Headers.AcceptEncoding);
        var representation = DeltaSelector.Select(request, entry, ordinary, _headers) ?? ordinary;

        var described = ResponseFields.For(entry, representation, _headers);
        described.WriteEntity(request, headers, cacheControlOverride);

        _onPrepareResponse?.Invoke(new PeregrineResponseContext(context, entry));

        // :: preconditions (Conditional)
        // Preconditions compare against the representation that would be sent (§13.1).
        var precondition = ConditionalRequest.Evaluate(request.Headers, representation.ETag, entry.LastModifiedHeader, entry.LastModified);
        if (precondition != PreconditionResult.Proceed)
        {
            return AnswerPrecondition(response, precondition);
        }

        // :: ranges (Ranges)
        // §14.2: GET is the only method with range semantics; HEAD ignores Range.
        var range = request.Headers.Range;
        if (range.Count != 0 && !isHead)
        {
            return ServeRanges(context, entry, representation, described, range);
        }

        // :: send (Send)
        if (!isHead && !ReferenceEquals(representation, ordinary))
        {
            _metrics.DeltaServed(ordinary.Length - representation.Length);
        }

        return _sender.SendWhole(context, entry, representation, described, isHead);
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
        if (_source.Unavailable)
        {
            // A bucket not copied once yet may stay unreachable for long (the log and /healthz
            // say why): answer now, rather than hold every request until it can be read.
            context.Response.StatusCode = StatusCodes.Status503ServiceUnavailable;
            context.Response.Headers.RetryAfter = "5";
            return;
        }

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

    /// <summary>A method other than GET and HEAD: a CORS preflight's 204, or 405.</summary>
    private Task AnswerOtherMethod(HttpRequest request, HttpResponse response)
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

    private Task RedirectToDirectory(HttpContext context, CatalogEntry entry)
    {
        // RFC 9110 §15.4.2: 301 to the slash-terminated path so that relative links in the
        // index document resolve; or 308 (§15.4.9) from a page's .html name to its clean URL.
        // The query string is kept.
        var request = context.Request;
        var location = request.PathBase.ToUriComponent()
            + _requestPathUri
            + entry.RedirectPath
            + request.QueryString.ToUriComponent();
        context.Response.StatusCode = entry.RedirectStatus;
        context.Response.Headers.Location = location;
        context.Response.ContentLength = 0;
        _metrics.Served(entry.RedirectStatus, 0, fromMemory: true, 0);
        return Task.CompletedTask;
    }

    /// <summary>304 or 412, with the entity fields already written.</summary>
    private Task AnswerPrecondition(HttpResponse response, PreconditionResult precondition)
    {
        if (precondition == PreconditionResult.NotModified)
        {
            response.StatusCode = StatusCodes.Status304NotModified;
            _metrics.Served(StatusCodes.Status304NotModified, 0, fromMemory: true, 0);
            return Task.CompletedTask;
        }

        response.StatusCode = StatusCodes.Status412PreconditionFailed;
        response.ContentLength = 0;
        _metrics.Served(StatusCodes.Status412PreconditionFailed, 0, fromMemory: true, 0);
        return Task.CompletedTask;
    }
}
