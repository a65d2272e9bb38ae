using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Features;

public sealed class SpaFallbackTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "<div id=app></div>");
        _tree.Write("app.3f9a1c2b.js", "app()");
        _host = await PeregrineHost.StartAsync(_tree.Root, options => options.SpaFallback = "index.html");
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/dashboard")]
    [InlineData("/users/42/settings")]
    public async Task Navigation_ToUnknownRoute_GetsTheAppShellUncached(string path)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Accept.ParseAdd("text/html,application/xhtml+xml,*/*;q=0.8");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("<div id=app></div>", await response.Content.ReadAsStringAsync());
        Assert.Equal("no-cache", response.Headers.CacheControl!.ToString());
    }

    [Theory]
    [InlineData("GET", "/app.deadbeef1.js", "text/html")]
    [InlineData("GET", "/missing.css", "text/html")]
    [InlineData("GET", "/dashboard", "application/json")]
    [InlineData("GET", "/dashboard", "")]
    [InlineData("POST", "/dashboard", "text/html")]
    [InlineData("DELETE", "/dashboard", "text/html")]
    public async Task NonNavigation_ToUnknownPath_StillGoesOn(string method, string path, string accept)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), path);
        if (accept.Length > 0)
        {
            request.Headers.Accept.ParseAdd(accept);
        }

        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Fact]
    public async Task Head_Navigation_GetsTheShellHeaders()
    {
        using var request = new HttpRequestMessage(HttpMethod.Head, "/route");
        request.Headers.Accept.ParseAdd("text/html");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(18, response.Content.Headers.ContentLength);
    }
}
