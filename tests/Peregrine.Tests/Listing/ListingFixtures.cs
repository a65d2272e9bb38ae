using System.Text;
using System.Text.RegularExpressions;
using Peregrine.Indexing;
using Peregrine.Listing;

namespace Peregrine.Tests.Listing;

/// <summary>Builds listings from compact specs and reads rendered pages back.</summary>
internal static partial class ListingFixtures
{
    public static readonly DateTimeOffset Epoch = new(2024, 5, 1, 12, 0, 0, TimeSpan.Zero);

    public static ListingItem File(string name, long length = 0, int minutes = 0)
        => new(name, false, length, Epoch.AddMinutes(minutes));

    public static ListingItem Directory(string name, int minutes = 0)
        => new(name, true, 0, Epoch.AddMinutes(minutes));

    /// <summary>Test tables spell sorts as the query string does, since xunit theories must be public.</summary>
    public static ListingSort Sort(string name) => name switch
    {
        "name" => ListingSort.Name,
        "size" => ListingSort.Size,
        "date" => ListingSort.Date,
        _ => throw new ArgumentOutOfRangeException(nameof(name)),
    };

    public static SortedViews Views(params ListingItem[] items) => SortedViews.Create(items);

    /// <summary>Names in the order a query shows them, directories with a trailing slash.</summary>
    public static string Names(SortedViews views, ListingQuery query)
    {
        var page = views.Page(query);
        var names = new List<string>();
        for (var i = page.Start; i < page.Start + page.Count; i++)
        {
            var item = views.At(query.Sort, query.Descending, i);
            names.Add(item.IsDirectory ? item.Name + "/" : item.Name);
        }

        return string.Join(" ", names);
    }

    public static string Html(SortedViews views, ListingQuery query = default, string baseHref = "/docs/", bool isMountRoot = false)
        => Encoding.UTF8.GetString(DirectoryListing.RenderHtml("/docs/", baseHref, isMountRoot, views, query));

    /// <summary>Every (href, link text) pair of the entry rows, HTML-decoded as a browser would.</summary>
    public static List<(string Href, string Text)> EntryLinks(string html)
    {
        var links = new List<(string, string)>();
        foreach (Match match in EntryLink().Matches(html))
        {
            links.Add((System.Net.WebUtility.HtmlDecode(match.Groups[1].Value), System.Net.WebUtility.HtmlDecode(match.Groups[2].Value)));
        }

        return links;
    }

    [GeneratedRegex("<td class=\"name\"><a href=\"([^\"]*)\">([^<]*)</a>")]
    private static partial Regex EntryLink();
}
