using Peregrine.Indexing;

namespace Peregrine.Listing;

internal static partial class DirectoryListing
{
    // The whole style sheet. It lives inline so that the page needs no second request and loads no
    // external resource; there are no style attributes and no script, so a hash-based CSP
    // (ContentSecurityPolicy) allows exactly this and nothing else. Colours are from GitHub's
    // Primer palette, chosen for WCAG AA contrast in both schemes.
    private static ReadOnlySpan<byte> Style =>
        ":root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--link:#0969da;--rule:#d1d9e0;--hover:#f6f8fa}"u8 +
        "@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--link:#4493f8;--rule:#3d444d;--hover:#151b23}}"u8 +
        "*{box-sizing:border-box}"u8 +
        "body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,sans-serif}"u8 +
        "main{max-width:980px;margin:0 auto;padding:24px 16px}"u8 +
        "h1{font-size:20px;font-weight:600;margin:0 0 4px;overflow-wrap:anywhere}"u8 +
        ".summary,.pager{color:var(--muted);font-size:14px}"u8 +
        "table{width:100%;border-collapse:collapse;margin:12px 0}"u8 +
        "th,td{padding:6px 8px;border-bottom:1px solid var(--rule);text-align:left;vertical-align:top}"u8 +
        "th{font-weight:600;white-space:nowrap}th a{color:inherit}"u8 +
        "td.name{overflow-wrap:anywhere}"u8 +
        ".size,.date{white-space:nowrap;font-variant-numeric:tabular-nums;color:var(--muted)}.size{text-align:right}"u8 +
        "tbody tr:hover{background:var(--hover)}"u8 +
        "a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}tr.dir a{font-weight:600}"u8 +
        ".pager{display:flex;gap:16px;flex-wrap:wrap;align-items:baseline}"u8 +
        "@media (max-width:600px){.date{display:none}}"u8;

    /// <summary>
    /// A Content-Security-Policy value that the HTML listing works under: nothing may load except
    /// its own inline style sheet (allowed by hash, CSP Level 2 §4.2) and the empty data: icon that
    /// stops browsers asking for /favicon.ico. Send it with the HTML, not with the JSON.
    /// </summary>
    public static readonly string ContentSecurityPolicy =
        "default-src 'none'; style-src 'sha256-" + StyleHash() +
        "'; img-src data:; base-uri 'none'; form-action 'none'";

    private static string StyleHash()
    {
        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(Style, hash);
        return Convert.ToBase64String(hash);
    }

    /// <summary>
    /// Renders one page of <paramref name="items"/> as a complete HTML document that works without
    /// script: sorting and paging are plain links carrying the query string.
    /// </summary>
    /// <param name="displayPath">The directory's decoded path as the reader should see it, e.g. <c>/docs/</c>.
    /// HTML-escaped here.</param>
    /// <param name="baseHref">The directory's percent-encoded request path (PathBase included) with a
    /// trailing slash, e.g. <c>/docs/caf%C3%A9/</c>. Entry links are this followed by the entry's
    /// percent-encoded name; it is HTML-escaped here too, since encoded paths may keep '&amp;' and '\''.</param>
    /// <param name="isMountRoot">When true there is no parent link: the parent is outside what is served.</param>
    /// <param name="items">The directory's entries, sorted once.</param>
    /// <param name="query">The request's sort and page; an out-of-range page shows the last page.</param>
    public static byte[] RenderHtml(string displayPath, string baseHref, bool isMountRoot, SortedViews items, ListingQuery query)
    {
        var page = items.Page(query);
        var html = new HtmlWriter(2048 + (page.Count * 320));

        // Every link starts with it, so it is escaped once per page rather than once per link.
        var escapedBase = HtmlWriter.Escape(baseHref);

        html.Raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"u8);
        html.Raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"u8);
        html.Raw("<meta name=\"color-scheme\" content=\"light dark\">\n<link rel=\"icon\" href=\"data:,\">\n<title>Index of "u8);
        html.Text(displayPath);
        html.Raw("</title>\n<style>"u8);
        html.Raw(Style);
        html.Raw("</style>\n</head>\n<body>\n<main>\n<h1>Index of "u8);
        html.Text(displayPath);
        html.Raw("</h1>\n<p class=\"summary\">"u8);
        Counted(html, items.DirectoryCount, " directory"u8, " directories"u8);
        html.Raw(", "u8);
        Counted(html, items.FileCount, " file"u8, " files"u8);
        html.Raw("</p>\n<table>\n<thead><tr>"u8);
        Header(html, escapedBase, query, ListingSort.Name, "Name"u8, "name"u8);
        Header(html, escapedBase, query, ListingSort.Size, "Size"u8, "size"u8);
        Header(html, escapedBase, query, ListingSort.Date, "Modified (UTC)"u8, "date"u8);
        html.Raw("</tr></thead>\n<tbody>\n"u8);

        if (!isMountRoot)
        {
            html.Raw("<tr class=\"dir\"><td class=\"name\"><a href=\""u8);
            html.Text(ParentOf(baseHref));
            html.Raw("\">../</a></td><td class=\"size\"></td><td class=\"date\"></td></tr>\n"u8);
        }

        for (var position = page.Start; position < page.Start + page.Count; position++)
        {
            Row(html, escapedBase, items.At(query.Sort, query.Descending, position));
        }

        if (items.Count == 0)
        {
            html.Raw("<tr><td class=\"name\" colspan=\"3\">This folder is empty.</td></tr>\n"u8);
        }

        html.Raw("</tbody>\n</table>\n"u8);
        if (page.Pages > 1)
        {
            Pager(html, escapedBase, query, page, items.Count);
        }

        html.Raw("</main>\n</body>\n</html>\n"u8);
        return html.ToArray();
    }

    private static void Header(HtmlWriter html, ReadOnlySpan<byte> escapedBase, ListingQuery query, ListingSort column, ReadOnlySpan<byte> label, ReadOnlySpan<byte> cssClass)
    {
        var current = query.Sort == column;
        html.Raw("<th scope=\"col\" class=\""u8);
        html.Raw(cssClass);
        html.Raw("\""u8);
        if (current)
        {
            html.Raw(query.Descending ? " aria-sort=\"descending\""u8 : " aria-sort=\"ascending\""u8);
        }

        // The current column's link reverses it; any other column starts ascending. Either way the
        // link returns to page 1, since the old page number means nothing in the new order.
        html.Raw("><a href=\""u8);
        QueryHref(html, escapedBase, column, current && !query.Descending, 1);
        html.Raw("\">"u8);
        html.Raw(label);
        if (current)
        {
            html.Raw(query.Descending ? " <span aria-hidden=\"true\">\u25BC</span>"u8 : " <span aria-hidden=\"true\">\u25B2</span>"u8);
        }

        html.Raw("</a></th>"u8);
    }

    private static void Row(HtmlWriter html, ReadOnlySpan<byte> escapedBase, ListingItem item)
    {
        html.Raw(item.IsDirectory ? "<tr class=\"dir\"><td class=\"name\"><a href=\""u8 : "<tr class=\"file\"><td class=\"name\"><a href=\""u8);
        html.Raw(escapedBase);
        html.PathSegment(item.Name);
        if (item.IsDirectory)
        {
            // The trailing slash saves the redirect the server would otherwise answer with.
            html.Raw("/"u8);
        }

        html.Raw("\">"u8);
        html.Text(item.Name);
        if (item.IsDirectory)
        {
            html.Raw("/</a></td><td class=\"size\">\u2014</td>"u8);
        }
        else
        {
            html.Raw("</a></td><td class=\"size\" title=\""u8);
            html.Number(item.Length);
            html.Raw(" bytes\">"u8);
            HumanSize(html, item.Length);
            html.Raw("</td>"u8);
        }

        var utc = WholeSecondsUtc(item.LastModified);
        html.Raw("<td class=\"date\"><time datetime=\""u8);
        html.Time(utc, "yyyy-MM-dd'T'HH:mm:ss'Z'");
        html.Raw("\">"u8);
        // RFC 3339 §5.6 allows a space for the 'T' "for the sake of readability".
        html.Time(utc, "yyyy-MM-dd HH:mm:ss'Z'");
        html.Raw("</time></td></tr>\n"u8);
    }

    private static void Pager(HtmlWriter html, ReadOnlySpan<byte> escapedBase, ListingQuery query, ListingPage page, int total)
    {
        html.Raw("<nav class=\"pager\" aria-label=\"Pages\">"u8);
        if (page.Number > 1)
        {
            html.Raw("<a rel=\"prev\" href=\""u8);
            QueryHref(html, escapedBase, query.Sort, query.Descending, page.Number - 1);
            html.Raw("\">\u2190 Previous</a>"u8);
        }
        else
        {
            html.Raw("<span>\u2190 Previous</span>"u8);
        }

        html.Raw("<span>Page "u8);
        html.Number(page.Number);
        html.Raw(" of "u8);
        html.Number(page.Pages);
        html.Raw(" (entries "u8);
        html.Number(page.Count == 0 ? 0 : page.Start + 1);
        html.Raw("\u2013"u8);
        html.Number(page.Start + page.Count);
        html.Raw(" of "u8);
        html.Number(total);
        html.Raw(")</span>"u8);

        if (page.Number < page.Pages)
        {
            html.Raw("<a rel=\"next\" href=\""u8);
            QueryHref(html, escapedBase, query.Sort, query.Descending, page.Number + 1);
            html.Raw("\">Next \u2192</a>"u8);
        }
        else
        {
            html.Raw("<span>Next \u2192</span>"u8);
        }

        html.Raw("</nav>\n"u8);
    }

    // Defaults are left out so that the plain directory URL stays the canonical one.
    private static void QueryHref(HtmlWriter html, ReadOnlySpan<byte> escapedBase, ListingSort sort, bool descending, int page)
    {
        html.Raw(escapedBase);
        var separator = "?"u8;
        if (sort != ListingSort.Name)
        {
            html.Raw(separator);
            html.Raw("sort="u8);
            html.Raw(SortName(sort));
            separator = "&amp;"u8;
        }

        if (descending)
        {
            html.Raw(separator);
            html.Raw("order=desc"u8);
            separator = "&amp;"u8;
        }

        if (page > 1)
        {
            html.Raw(separator);
            html.Raw("page="u8);
            html.Number(page);
        }
    }

    // "/a/b/" → "/a/"; anything without a parent segment falls back to the relative "../".
    private static string ParentOf(string baseHref)
    {
        var trimmed = baseHref.AsSpan().TrimEnd('/');
        var slash = trimmed.LastIndexOf('/');
        return slash < 0 || trimmed.IsEmpty ? "../" : baseHref[..(slash + 1)];
    }

    private static void Counted(HtmlWriter html, int count, ReadOnlySpan<byte> singular, ReadOnlySpan<byte> plural)
    {
        html.Number(count);
        html.Raw(count == 1 ? singular : plural);
    }

    // Binary units, as ls -h and most file managers use: "999 B", "1.5 KiB", "12 MiB". One decimal
    // below ten, none above, and a value that would round to 1024 moves up a unit instead.
    private static void HumanSize(HtmlWriter html, long bytes)
    {
        if (bytes < 1024)
        {
            html.Number(Math.Max(bytes, 0));
            html.Raw(" B"u8);
            return;
        }

        double value = bytes;
        var unit = 0;
        while (value >= 1023.5 && unit < 6)
        {
            value /= 1024;
            unit++;
        }

        html.Number(value, value < 9.95 ? "0.0" : "0");
        html.Raw(unit switch
        {
            1 => " KiB"u8,
            2 => " MiB"u8,
            3 => " GiB"u8,
            4 => " TiB"u8,
            5 => " PiB"u8,
            _ => " EiB"u8,
        });
    }

    // Last-Modified carries whole seconds (RFC 9110 §5.6.7), so the listing shows the same instant.
    private static DateTime WholeSecondsUtc(DateTimeOffset time)
    {
        var ticks = time.UtcTicks;
        return new DateTime(ticks - (ticks % TimeSpan.TicksPerSecond), DateTimeKind.Utc);
    }
}
