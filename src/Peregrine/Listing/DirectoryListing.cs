using Microsoft.AspNetCore.Http;
using Peregrine.Indexing;

// Listing: the answer for a folder entry without a default document, when listings are on. The
// catalog resolved the path (catalog -> negotiation -> conditional -> ranges -> send) to a folder
// entry whose children it sorted at index time (SortedViews); this stage takes the place of
// negotiation and send for it: it reads the query (sort, order, page), pages the sorted children
// and renders the page as HTML or JSON. No folder is read and nothing is sorted per request.

namespace Peregrine.Listing;

/// <summary>
/// Renders a directory listing as HTML or JSON. Pure: it reads a <see cref="SortedViews"/> and a
/// <see cref="ListingQuery"/> and returns the body; status, headers and caching are the caller's.
/// </summary>
/// <remarks>
/// Split by concern: query parsing here, the HTML page in <c>DirectoryListing.Html.cs</c>, the
/// JSON document in <c>DirectoryListing.Json.cs</c>.
/// </remarks>
internal static partial class DirectoryListing
{
    /// <summary>
    /// Entries per page when the caller does not choose: 1,000. An HTML row is about 300 bytes, so a
    /// full page is about 300 KB that a browser lays out in a few milliseconds and a reader can
    /// still scroll; almost every real folder fits on one page, so paging only shows up for the
    /// generated or archival folders that need it.
    /// </summary>
    public const int DefaultPageSize = 1000;

    /// <summary>The largest page a caller may configure: 10,000 entries, Caddy's cap.</summary>
    public const int MaxPageSize = 10_000;

    /// <summary>Media type of <see cref="RenderHtml"/>'s output.</summary>
    public const string HtmlContentType = "text/html; charset=utf-8";

    /// <summary>Media type of <see cref="RenderJson"/>'s output.</summary>
    public const string JsonContentType = "application/json; charset=utf-8";

    /// <summary>Clamps the query's page to the pages that exist and returns the window to show.</summary>
    /// <remarks>
    /// A page past the end shows the last page rather than nothing: a folder that shrank between
    /// two requests, or a hand-edited <c>?page=</c>, still shows entries, and the page number
    /// reported back is the one shown, so the pager stays coherent.
    /// </remarks>
    public static ListingPage Page(this SortedViews items, ListingQuery query)
    {
        var size = query.PageSize <= 0 ? DefaultPageSize : Math.Min(query.PageSize, MaxPageSize);
        var pages = Math.Max(1, (int)(((long)items.Count + size - 1) / size));
        var number = Math.Clamp(query.Page, 1, pages);
        var start = (int)((long)(number - 1) * size);
        return new ListingPage(number, pages, size, start, Math.Min(size, items.Count - start));
    }

    /// <summary>
    /// Reads <c>sort=name|size|date</c> (also <c>modified</c> and <c>time</c>, Caddy's spelling),
    /// <c>order=asc|desc</c> and <c>page=N</c> (1-based) from a raw query string, with or without
    /// its leading '?'.
    /// </summary>
    /// <remarks>
    /// Tolerant and total: it never throws and never allocates. Keys and values are matched
    /// case-insensitively; a value that is missing, empty, unknown, percent-encoded or not a plain
    /// run of ASCII digits leaves that setting at its default (name, ascending, page 1); the
    /// first occurrence of a key wins; other keys are ignored. A page number too large for an
    /// <see cref="int"/> saturates and so shows the last page. Reading the raw string rather than
    /// <see cref="HttpRequest.Query"/> avoids building the request's query dictionary.
    /// </remarks>
    public static ListingQuery ParseQuery(ReadOnlySpan<char> query, int pageSize = DefaultPageSize)
    {
        if (!query.IsEmpty && query[0] == '?')
        {
            query = query[1..];
        }

        ListingSort? sort = null;
        bool? descending = null;
        int? page = null;

        foreach (var range in query.Split('&'))
        {
            var pair = query[range];
            var equals = pair.IndexOf('=');
            var key = equals < 0 ? pair : pair[..equals];
            var value = equals < 0 ? [] : pair[(equals + 1)..];

            if (sort is null && key.Equals("sort", StringComparison.OrdinalIgnoreCase))
            {
                sort = ParseSort(value);
            }
            else if (descending is null && key.Equals("order", StringComparison.OrdinalIgnoreCase))
            {
                descending = ParseOrder(value);
            }
            else if (page is null && key.Equals("page", StringComparison.OrdinalIgnoreCase))
            {
                page = ParsePage(value);
            }
        }

        return new ListingQuery(sort ?? ListingSort.Name, descending ?? false, page ?? 1, pageSize);
    }

    /// <inheritdoc cref="ParseQuery(ReadOnlySpan{char}, int)"/>
    public static ListingQuery ParseQuery(QueryString query, int pageSize = DefaultPageSize)
        => ParseQuery(query.Value.AsSpan(), pageSize);

    // A bad value counts as the key's first occurrence, so "?sort=bogus&sort=size" is name order:
    // the rule "the first occurrence wins" holds without exceptions.
    private static ListingSort ParseSort(ReadOnlySpan<char> value)
    {
        if (value.Equals("size", StringComparison.OrdinalIgnoreCase))
        {
            return ListingSort.Size;
        }

        if (value.Equals("date", StringComparison.OrdinalIgnoreCase)
            || value.Equals("modified", StringComparison.OrdinalIgnoreCase)
            || value.Equals("time", StringComparison.OrdinalIgnoreCase))
        {
            return ListingSort.Date;
        }

        return ListingSort.Name;
    }

    private static bool ParseOrder(ReadOnlySpan<char> value)
        => value.Equals("desc", StringComparison.OrdinalIgnoreCase);

    private static int ParsePage(ReadOnlySpan<char> value)
    {
        if (value.IsEmpty)
        {
            return 1;
        }

        var page = 0;
        foreach (var c in value)
        {
            if (!char.IsAsciiDigit(c))
            {
                return 1;
            }

            // Saturate rather than wrap: an absurd page number means "the last page".
            page = page > (int.MaxValue - 9) / 10 ? int.MaxValue : (page * 10) + (c - '0');
        }

        return page;
    }

    private static ReadOnlySpan<byte> SortName(ListingSort sort) => sort switch
    {
        ListingSort.Size => "size"u8,
        ListingSort.Date => "date"u8,
        _ => "name"u8,
    };
}
