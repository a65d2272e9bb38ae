using Microsoft.AspNetCore.Http;
using Peregrine.Indexing;
using Peregrine.Listing;
using static Peregrine.Tests.Listing.ListingFixtures;

namespace Peregrine.Tests.Listing;

public sealed class ListingQueryTests
{
    [Theory]
    [InlineData("", "name", false, 1)]
    [InlineData("?", "name", false, 1)]
    [InlineData("?sort=name", "name", false, 1)]
    [InlineData("?sort=size", "size", false, 1)]
    [InlineData("?sort=date", "date", false, 1)]
    [InlineData("?sort=modified", "date", false, 1)]
    [InlineData("?sort=time", "date", false, 1)]
    [InlineData("?sort=SIZE&ORDER=DESC", "size", true, 1)]
    [InlineData("?order=desc", "name", true, 1)]
    [InlineData("?order=asc", "name", false, 1)]
    [InlineData("?page=3", "name", false, 3)]
    [InlineData("?page=007", "name", false, 7)]
    [InlineData("sort=date&order=desc&page=2", "date", true, 2)]
    [InlineData("?utm_source=x&page=2&sort=size", "size", false, 2)]
    // The first occurrence of a key wins, even when it is the bad one.
    [InlineData("?sort=size&sort=date", "size", false, 1)]
    [InlineData("?sort=bogus&sort=size", "name", false, 1)]
    [InlineData("?page=2&page=5", "name", false, 2)]
    public void ParseQuery_WellFormed_ReadsSortOrderAndPage(string query, string sortName, bool descending, int page)
    {
        var sort = Sort(sortName);
        var parsed = DirectoryListing.ParseQuery(query);

        Assert.Equal(new ListingQuery(sort, descending, page, DirectoryListing.DefaultPageSize), parsed);
    }

    [Theory]
    [InlineData("?sort=")]
    [InlineData("?sort")]
    [InlineData("?sort=nam")]
    [InlineData("?sort=names")]
    [InlineData("?sort=%73ize")]
    [InlineData("?sort=size%00")]
    [InlineData("?sort= size")]
    [InlineData("?order=")]
    [InlineData("?order=descending")]
    [InlineData("?order=up")]
    [InlineData("?page=")]
    [InlineData("?page")]
    [InlineData("?page=abc")]
    [InlineData("?page=-2")]
    [InlineData("?page=+2")]
    [InlineData("?page= 2")]
    [InlineData("?page=2.5")]
    [InlineData("?page=1e3")]
    [InlineData("?page=%32")]
    [InlineData("?page=٣")]
    [InlineData("?=size")]
    [InlineData("?&&&")]
    [InlineData("?==&=")]
    [InlineData("??sort=size")]
    [InlineData("?sort=size=size")]
    public void ParseQuery_BadValues_FallBackToTheDefaults(string query)
    {
        var parsed = DirectoryListing.ParseQuery(query);

        Assert.Equal(new ListingQuery(ListingSort.Name, false, 1, DirectoryListing.DefaultPageSize), parsed);
    }

    [Theory]
    [InlineData("?page=0", 0)]
    [InlineData("?page=2147483647", int.MaxValue)]
    [InlineData("?page=2147483648", int.MaxValue)]
    [InlineData("?page=99999999999999999999999999", int.MaxValue)]
    public void ParseQuery_PageOutOfRange_IsKeptForTheRendererToClamp(string query, int page)
    {
        // Clamping needs the entry count, which only the renderer has; see SortedViews.Page.
        Assert.Equal(page, DirectoryListing.ParseQuery(query).Page);
    }

    [Fact]
    public void ParseQuery_LoneSurrogates_FallBackToTheDefaults()
    {
        var query = "?sort=" + '\uD800' + "&page=" + '\uDC00';

        Assert.Equal(new ListingQuery(ListingSort.Name, false, 1, DirectoryListing.DefaultPageSize), DirectoryListing.ParseQuery(query));
    }

    [Theory]
    [InlineData("separators")]
    [InlineData("repeated keys")]
    [InlineData("long page number")]
    [InlineData("long key")]
    public void ParseQuery_HostileQueryOfMegabytes_IsReadInOnePass(string shape)
    {
        // The query string comes from the client, up to Kestrel's request-line limit or beyond
        // it over HTTP/2. Parsing must stay linear in its length; the bound fails a parser that
        // goes back over the string for each pair.
        const int Size = 4 << 20;
        var query = shape switch
        {
            "separators" => "?" + new string('&', Size),
            "repeated keys" => "?" + string.Concat(Enumerable.Repeat("sort=x&order=y&", Size / 15)) + "page=2",
            "long page number" => "?page=" + new string('9', Size),
            _ => "?" + new string('s', Size) + "=size",
        };

        var stopwatch = System.Diagnostics.Stopwatch.StartNew();
        var parsed = DirectoryListing.ParseQuery(query);

        Assert.True(stopwatch.Elapsed < TimeSpan.FromSeconds(1), $"took {stopwatch.ElapsedMilliseconds} ms");
        Assert.Equal(ListingSort.Name, parsed.Sort);
        Assert.False(parsed.Descending);
        Assert.Equal(shape switch { "long page number" => int.MaxValue, "repeated keys" => 2, _ => 1 }, parsed.Page);
    }

    [Fact]
    public void ParseQuery_QueryString_ReadsTheSameAsItsRawValue()
    {
        var parsed = DirectoryListing.ParseQuery(new QueryString("?sort=date&order=desc&page=4"), pageSize: 50);

        Assert.Equal(new ListingQuery(ListingSort.Date, true, 4, 50), parsed);
    }

    [Fact]
    public void ParseQuery_EmptyQueryString_IsTheDefault()
    {
        Assert.Equal(new ListingQuery(ListingSort.Name, false, 1, 1000), DirectoryListing.ParseQuery(QueryString.Empty));
    }
}
