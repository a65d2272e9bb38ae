using System.Net;
using System.Text.Json;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Listing;

public sealed class ListingEndToEndTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("files/a.txt", "a");
        _tree.Write("files/<script>alert(1)</script>.txt", "x");
        _tree.Write("files/.secret", "hidden");
        _tree.Write("files/sub/b.txt", "b");
        _tree.Write("site/index.html", "has an index");
        _host = await PeregrineHost.StartAsync(_tree.Root, options => options.DirectoryListing = true);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task Folder_WithoutIndex_IsListedAsEscapedHtml()
    {
        using var response = await _host.Client.GetAsync("/files/");
        var html = await response.Content.ReadAsStringAsync();

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/html; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        Assert.Contains("a.txt", html);
        Assert.Contains("sub/", html);
        Assert.DoesNotContain("<script>alert(1)</script>", html);
        Assert.DoesNotContain(".secret", html);
        Assert.True(response.Headers.Contains("Content-Security-Policy"));
    }

    [Fact]
    public async Task Folder_AskedForJson_IsListedAsJson()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/files/?sort=size&order=desc");
        request.Headers.Accept.ParseAdd("application/json");
        using var response = await _host.Client.SendAsync(request);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());

        Assert.Equal("application/json; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        var names = json.RootElement.GetProperty("items").EnumerateArray().Select(item => item.GetProperty("name").GetString()).ToList();
        Assert.Equal(3, names.Count);
        Assert.Equal("sub", names[0]);
        Assert.DoesNotContain(".secret", names);
    }

    [Fact]
    public async Task Folder_WithIndex_ServesTheIndexNotAListing()
    {
        using var response = await _host.Client.GetAsync("/site/");

        Assert.Equal("has an index", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Folder_WithoutSlash_RedirectsToTheListing()
    {
        using var response = await _host.Client.GetAsync("/files");

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal("/files/", response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task Listing_IsOffByDefault()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root);

        using var response = await host.Client.GetAsync("/files/");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }
}
