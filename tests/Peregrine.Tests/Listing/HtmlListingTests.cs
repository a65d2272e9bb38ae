using System.Security.Cryptography;
using System.Text;
using Peregrine.Indexing;
using Peregrine.Listing;
using static Peregrine.Tests.Listing.ListingFixtures;

namespace Peregrine.Tests.Listing;

public sealed class HtmlListingTests
{
    [Theory]
    [InlineData("<script>alert(1)</script>.txt", "<script>")]
    [InlineData("\"><img src=x onerror=alert(1)>", "<img")]
    [InlineData("'><svg onload=alert(1)>", "<svg")]
    [InlineData("a&b.txt", "a&b")]
    [InlineData("x\" onmouseover=\"alert(1)", "\" onmouseover")]
    public void Render_HostileName_AppearsOnlyAsEscapedText(string name, string mustNotAppear)
    {
        var html = Html(Views(File(name), Directory(name)));

        Assert.DoesNotContain(mustNotAppear, html, StringComparison.Ordinal);
        var links = EntryLinks(html);
        Assert.Contains(links, link => link.Text == name);
        Assert.Contains(links, link => link.Text == name + "/");
        Assert.All(links, link => Assert.DoesNotContain('"', link.Href));
    }

    [Theory]
    [InlineData("plain.txt", "/docs/plain.txt")]
    [InlineData("a b.txt", "/docs/a%20b.txt")]
    [InlineData("#hash.txt", "/docs/%23hash.txt")]
    [InlineData("what?.txt", "/docs/what%3F.txt")]
    [InlineData("100%.txt", "/docs/100%25.txt")]
    [InlineData("a&b.txt", "/docs/a%26b.txt")]
    [InlineData("café.txt", "/docs/caf%C3%A9.txt")]
    [InlineData("日本.txt", "/docs/%E6%97%A5%E6%9C%AC.txt")]
    [InlineData("emoji-\U0001F600", "/docs/emoji-%F0%9F%98%80")]
    [InlineData("a:b.txt", "/docs/a%3Ab.txt")]
    [InlineData("a+b=c.txt", "/docs/a%2Bb%3Dc.txt")]
    [InlineData("<script>alert(1)</script>.txt", "/docs/%3Cscript%3Ealert%281%29%3C%2Fscript%3E.txt")]
    [InlineData("\"><img src=x onerror=alert(1)>", "/docs/%22%3E%3Cimg%20src%3Dx%20onerror%3Dalert%281%29%3E")]
    public void Render_FileName_LinksThePercentEncodedSegment(string name, string expectedHref)
    {
        var link = Assert.Single(EntryLinks(Html(Views(File(name)), isMountRoot: true)));

        Assert.Equal(expectedHref, link.Href);
        Assert.Equal(name, link.Text);
    }

    [Theory]
    [InlineData("a b.txt")]
    [InlineData("#hash.txt")]
    [InlineData("what?.txt")]
    [InlineData("100%.txt")]
    [InlineData("café.txt")]
    [InlineData("a&b.txt")]
    [InlineData("a:b")]
    [InlineData("<script>alert(1)</script>.txt")]
    [InlineData("'quoted' (1) [2] {3} ~!@$*,;.txt")]
    public void Render_AnyName_LinkResolvesToExactlyThatNameInTheDirectory(string name)
    {
        // Resolve as a browser does, against the listing's own URL with a query string on it.
        var page = new Uri("http://example.test/docs/?sort=size&order=desc");

        foreach (var (href, _) in EntryLinks(Html(Views(File(name), Directory(name)), isMountRoot: true)))
        {
            var target = new Uri(page, href);
            Assert.Equal("", target.Query);
            Assert.Equal("", target.Fragment);
            Assert.StartsWith("/docs/", target.AbsolutePath, StringComparison.Ordinal);
            Assert.Equal(name, Uri.UnescapeDataString(target.AbsolutePath["/docs/".Length..].TrimEnd('/')));
        }
    }

    [Fact]
    public void Render_Directory_LinksWithATrailingSlash()
    {
        var link = Assert.Single(EntryLinks(Html(Views(Directory("sub dir")), isMountRoot: true)));

        Assert.Equal(("/docs/sub%20dir/", "sub dir/"), link);
    }

    [Fact]
    public void Render_BaseHrefWithAmpersandAndQuote_IsEscapedInTheAttribute()
    {
        var html = Html(Views(File("x")), baseHref: "/a&b/it's/", isMountRoot: true);

        Assert.Contains("href=\"/a&amp;b/it&#x27;s/x\"", html, StringComparison.Ordinal);
        Assert.Equal("/a&b/it's/x", Assert.Single(EntryLinks(html)).Href);
    }

    [Fact]
    public void Render_DisplayPath_IsEscapedInTitleAndHeading()
    {
        var html = Encoding.UTF8.GetString(DirectoryListing.RenderHtml("/<b>&\"/", "/%3Cb%3E%26%22/", false, SortedViews.Empty, default));

        Assert.DoesNotContain("<b>", html, StringComparison.Ordinal);
        Assert.Contains("<title>Index of /&lt;b&gt;&amp;&quot;/</title>", html, StringComparison.Ordinal);
        Assert.Contains("<h1>Index of /&lt;b&gt;&amp;&quot;/</h1>", html, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("/docs/sub/", false, "/docs/")]
    [InlineData("/docs/", false, "/")]
    [InlineData("/", false, "../")]
    [InlineData("/docs/", true, null)]
    public void Render_ParentLink_PointsUpOneLevelUnlessAtTheMountRoot(string baseHref, bool isMountRoot, string? parent)
    {
        var links = EntryLinks(Html(Views(File("x")), baseHref: baseHref, isMountRoot: isMountRoot));

        if (parent is null)
        {
            Assert.DoesNotContain(links, link => link.Text == "../");
        }
        else
        {
            Assert.Equal((parent, "../"), links[0]);
        }
    }

    [Fact]
    public void Render_Document_IsUtf8WithViewportAndBothColourSchemesAndNoScript()
    {
        var html = Html(Views(File("x")));

        Assert.StartsWith("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">", html, StringComparison.Ordinal);
        Assert.Contains("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">", html, StringComparison.Ordinal);
        Assert.Contains("@media (prefers-color-scheme:dark)", html, StringComparison.Ordinal);
        Assert.DoesNotContain("<script", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain(" style=", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("http:", html, StringComparison.OrdinalIgnoreCase);
        Assert.DoesNotContain("https:", html, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void ContentSecurityPolicy_StyleHash_MatchesTheRenderedStyleSheet()
    {
        var html = Html(Views(File("x")));
        var start = html.IndexOf("<style>", StringComparison.Ordinal) + "<style>".Length;
        var css = html[start..html.IndexOf("</style>", StringComparison.Ordinal)];
        var hash = Convert.ToBase64String(SHA256.HashData(Encoding.UTF8.GetBytes(css)));

        Assert.Contains($"style-src 'sha256-{hash}'", DirectoryListing.ContentSecurityPolicy, StringComparison.Ordinal);
        Assert.StartsWith("default-src 'none';", DirectoryListing.ContentSecurityPolicy, StringComparison.Ordinal);
    }

    [Theory]
    // The current column is marked and its link reverses it; other columns link to ascending.
    [InlineData("name", false, "name", "ascending", "/docs/?order=desc", "/docs/?sort=size", "/docs/?sort=date")]
    [InlineData("name", true, "name", "descending", "/docs/", "/docs/?sort=size", "/docs/?sort=date")]
    [InlineData("size", false, "size", "ascending", "/docs/", "/docs/?sort=size&amp;order=desc", "/docs/?sort=date")]
    [InlineData("date", true, "date", "descending", "/docs/", "/docs/?sort=size", "/docs/?sort=date")]
    public void Render_ColumnHeaders_LinkToTheirOrderAndMarkTheCurrentOne(string sortName, bool descending, string current, string ariaSort, string nameHref, string sizeHref, string dateHref)
    {
        var sort = Sort(sortName);
        var html = Html(Views(File("x")), new ListingQuery(sort, descending, 1, 0));

        Assert.Contains($"<th scope=\"col\" class=\"{current}\" aria-sort=\"{ariaSort}\">", html, StringComparison.Ordinal);
        Assert.Single(html.Split("aria-sort=").Skip(1));
        Assert.Contains($"class=\"name\"{(current == "name" ? $" aria-sort=\"{ariaSort}\"" : "")}><a href=\"{nameHref}\">Name", html, StringComparison.Ordinal);
        Assert.Contains($"class=\"size\"{(current == "size" ? $" aria-sort=\"{ariaSort}\"" : "")}><a href=\"{sizeHref}\">Size", html, StringComparison.Ordinal);
        Assert.Contains($"class=\"date\"{(current == "date" ? $" aria-sort=\"{ariaSort}\"" : "")}><a href=\"{dateHref}\">Modified", html, StringComparison.Ordinal);
        Assert.Contains(descending ? "\u25BC" : "\u25B2", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Render_SecondOfThreePages_ShowsThoseEntriesAndLinksBothWays()
    {
        var views = Views([.. Enumerable.Range(0, 25).Select(i => File($"f{i:D2}"))]);

        var html = Html(views, new ListingQuery(ListingSort.Size, true, 2, 10), isMountRoot: true);

        var names = EntryLinks(html).Select(link => link.Text).ToList();
        Assert.Equal([.. Enumerable.Range(5, 10).Reverse().Select(i => $"f{i:D2}")], names);
        Assert.Contains("<a rel=\"prev\" href=\"/docs/?sort=size&amp;order=desc\">", html, StringComparison.Ordinal);
        Assert.Contains("<a rel=\"next\" href=\"/docs/?sort=size&amp;order=desc&amp;page=3\">", html, StringComparison.Ordinal);
        Assert.Contains("Page 2 of 3 (entries 11\u201320 of 25)", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Render_PagePastTheEnd_ShowsTheLastPageWithNoNextLink()
    {
        var views = Views([.. Enumerable.Range(0, 25).Select(i => File($"f{i:D2}"))]);

        var html = Html(views, new ListingQuery(ListingSort.Name, false, 99, 10), isMountRoot: true);

        Assert.Equal(5, EntryLinks(html).Count);
        Assert.Contains("Page 3 of 3 (entries 21\u201325 of 25)", html, StringComparison.Ordinal);
        Assert.Contains("<a rel=\"prev\" href=\"/docs/?page=2\">", html, StringComparison.Ordinal);
        Assert.DoesNotContain("rel=\"next\"", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Render_SinglePage_HasNoPager()
    {
        var html = Html(Views(File("x"), Directory("d")));

        Assert.DoesNotContain("class=\"pager\"", html, StringComparison.Ordinal);
        Assert.Contains("<p class=\"summary\">1 directory, 1 file</p>", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Render_EmptyFolder_SaysSo()
    {
        var html = Html(SortedViews.Empty);

        Assert.Contains("This folder is empty.", html, StringComparison.Ordinal);
        Assert.Contains("<p class=\"summary\">0 directories, 0 files</p>", html, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(0, "0 B")]
    [InlineData(1, "1 B")]
    [InlineData(1023, "1023 B")]
    [InlineData(1024, "1.0 KiB")]
    [InlineData(1536, "1.5 KiB")]
    [InlineData(10_137, "9.9 KiB")]
    [InlineData(10_189, "10 KiB")]
    [InlineData(10_240, "10 KiB")]
    [InlineData(1_048_064, "1.0 MiB")]
    [InlineData(5_368_709_120, "5.0 GiB")]
    [InlineData(long.MaxValue, "8.0 EiB")]
    public void Render_FileSize_IsHumanReadableWithExactBytesInTheTitle(long length, string shown)
    {
        var html = Html(Views(File("x", length)));

        Assert.Contains($"<td class=\"size\" title=\"{length} bytes\">{shown}</td>", html, StringComparison.Ordinal);
    }

    [Fact]
    public void Render_Directory_HasNoSize()
    {
        Assert.Contains("<td class=\"size\">\u2014</td>", Html(Views(Directory("d"))), StringComparison.Ordinal);
    }

    [Fact]
    public void Render_ModifiedTime_IsIsoUtcToTheSecond()
    {
        var local = new DateTimeOffset(2024, 5, 1, 14, 34, 56, TimeSpan.FromHours(2)).AddTicks(9_999_999);

        var html = Html(Views(new ListingItem("x", false, 1, local)));

        Assert.Contains("<time datetime=\"2024-05-01T12:34:56Z\">2024-05-01 12:34:56Z</time>", html, StringComparison.Ordinal);
    }
}
