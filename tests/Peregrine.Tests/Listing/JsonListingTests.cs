using System.Text.Json;
using Peregrine.Indexing;
using Peregrine.Listing;
using static Peregrine.Tests.Listing.ListingFixtures;

namespace Peregrine.Tests.Listing;

public sealed class JsonListingTests
{
    private static JsonElement Render(SortedViews views, ListingQuery query = default, string path = "/docs/")
        => JsonDocument.Parse(DirectoryListing.RenderJson(path, views, query)).RootElement;

    [Fact]
    public void Render_Listing_HasEveryDocumentedField()
    {
        var root = Render(Views(File("a.txt", 1234, minutes: 1), Directory("sub")), new ListingQuery(ListingSort.Size, true, 1, 50));

        Assert.Equal("/docs/", root.GetProperty("path").GetString());
        Assert.Equal("size", root.GetProperty("sort").GetString());
        Assert.Equal("desc", root.GetProperty("order").GetString());
        Assert.Equal(1, root.GetProperty("page").GetInt32());
        Assert.Equal(50, root.GetProperty("pageSize").GetInt32());
        Assert.Equal(2, root.GetProperty("total").GetInt32());
        Assert.Equal(1, root.GetProperty("pages").GetInt32());

        var items = root.GetProperty("items").EnumerateArray().ToArray();
        Assert.Equal(2, items.Length);

        Assert.Equal("sub", items[0].GetProperty("name").GetString());
        Assert.Equal("directory", items[0].GetProperty("type").GetString());
        Assert.Equal(JsonValueKind.Null, items[0].GetProperty("size").ValueKind);
        Assert.Equal("2024-05-01T12:00:00Z", items[0].GetProperty("modified").GetString());

        Assert.Equal("a.txt", items[1].GetProperty("name").GetString());
        Assert.Equal("file", items[1].GetProperty("type").GetString());
        Assert.Equal(1234, items[1].GetProperty("size").GetInt64());
        Assert.Equal("2024-05-01T12:01:00Z", items[1].GetProperty("modified").GetString());
    }

    [Fact]
    public void Render_ModifiedWithAnOffsetAndFraction_IsUtcToTheSecond()
    {
        var local = new DateTimeOffset(2024, 5, 1, 14, 34, 56, TimeSpan.FromHours(2)).AddMilliseconds(789);

        var root = Render(Views(new ListingItem("x", false, 1, local)));

        Assert.Equal("2024-05-01T12:34:56Z", root.GetProperty("items")[0].GetProperty("modified").GetString());
    }

    [Theory]
    [InlineData("<script>alert(1)</script>.txt")]
    [InlineData("\"><img src=x onerror=alert(1)>")]
    [InlineData("a&b.txt")]
    [InlineData("quote\" and \\ backslash")]
    [InlineData("café \U0001F600.txt")]
    [InlineData("line\nbreak\u0001")]
    public void Render_AwkwardName_RoundTripsAndNeverAppearsRaw(string name)
    {
        var bytes = DirectoryListing.RenderJson("/<p>/", Views(File(name)), default);

        Assert.Equal(name, JsonDocument.Parse(bytes).RootElement.GetProperty("items")[0].GetProperty("name").GetString());
        Assert.DoesNotContain("<", System.Text.Encoding.UTF8.GetString(bytes), StringComparison.Ordinal);
    }

    [Fact]
    public void Render_SecondOfThreePages_HasThoseEntries()
    {
        var views = Views([.. Enumerable.Range(0, 25).Select(i => File($"f{i:D2}", length: i))]);

        var root = Render(views, new ListingQuery(ListingSort.Name, false, 2, 10));

        Assert.Equal((2, 3, 25), (root.GetProperty("page").GetInt32(), root.GetProperty("pages").GetInt32(), root.GetProperty("total").GetInt32()));
        var names = root.GetProperty("items").EnumerateArray().Select(item => item.GetProperty("name").GetString()!).ToArray();
        Assert.Equal([.. Enumerable.Range(10, 10).Select(i => $"f{i:D2}")], names);
    }

    [Fact]
    public void Render_PagePastTheEnd_ReportsTheLastPageShown()
    {
        var views = Views([.. Enumerable.Range(0, 25).Select(i => File($"f{i:D2}"))]);

        var root = Render(views, new ListingQuery(ListingSort.Name, false, 40, 10));

        Assert.Equal(3, root.GetProperty("page").GetInt32());
        Assert.Equal(5, root.GetProperty("items").GetArrayLength());
    }

    [Fact]
    public void Render_EmptyFolder_IsPageOneOfOneWithNoItems()
    {
        var root = Render(SortedViews.Empty);

        Assert.Equal((1, 1, 0, 0), (root.GetProperty("page").GetInt32(), root.GetProperty("pages").GetInt32(), root.GetProperty("total").GetInt32(), root.GetProperty("items").GetArrayLength()));
    }
}
