using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Indexing;
using Peregrine.Listing;
using Peregrine.Send;

namespace Peregrine.Serving;

/// <summary>Directory listings, for folders without a default document when listings are on.</summary>
internal sealed partial class PeregrineMiddleware
{
    private static readonly StringValues s_varyAccept = "Accept";
    private static readonly StringValues s_listingCsp = DirectoryListing.ContentSecurityPolicy;

    private Task ServeListing(HttpContext context, CatalogEntry entry, SortedViews listing, bool isHead)
    {
        var request = context.Request;
        var response = context.Response;
        var headers = response.Headers;
        var query = DirectoryListing.ParseQuery(request.QueryString);
        var prefix = _catalog.Options.RequestPath.Value ?? "";

        // JSON only for a client that asks for it and not for HTML: browsers send */* too.
        var json = WantsJson(request.Headers.Accept);
        byte[] body;
        if (json)
        {
            body = DirectoryListing.RenderJson(prefix + entry.RelativePath + "/", listing, query);
            headers.ContentType = DirectoryListing.JsonContentType;
        }
        else
        {
            var baseHref = request.PathBase.ToUriComponent() + _requestPathUri + entry.ListingPath;
            body = DirectoryListing.RenderHtml(prefix + entry.RelativePath + "/", baseHref, entry.RelativePath.Length == 0, listing, query);
            headers.ContentType = DirectoryListing.HtmlContentType;
            headers.ContentSecurityPolicy = s_listingCsp;
        }

        // A listing changes with the folder; it is always revalidated, never cached as is.
        headers.CacheControl = s_noCache;
        headers.Vary = s_varyAccept;
        headers.XContentTypeOptions = "nosniff";
        response.ContentLength = body.Length;
        _metrics.Served(StatusCodes.Status200OK, isHead ? 0 : body.Length, fromMemory: true, 0);
        return isHead ? Task.CompletedTask : BodySender.WriteAsync(response, body);
    }

    private static bool WantsJson(StringValues accept)
    {
        var json = false;
        foreach (var value in accept)
        {
            if (value is null)
            {
                continue;
            }

            if (value.Contains("text/html", StringComparison.OrdinalIgnoreCase))
            {
                return false;
            }

            json |= value.Contains("application/json", StringComparison.OrdinalIgnoreCase);
        }

        return json;
    }
}
