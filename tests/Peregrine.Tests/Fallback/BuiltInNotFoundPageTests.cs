using System.Net;
using System.Text;
using Peregrine.Fallback;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server;

namespace Peregrine.Tests.Fallback;

/// <summary>The standalone server's own 404 page, for navigations on a site without a 404.html.</summary>
public sealed class BuiltInNotFoundPageTests : IDisposable
{
    private readonly TempTree _tree = new();

    public BuiltInNotFoundPageTests()
    {
        _tree.Write("index.html", "home");
    }

    public void Dispose() => _tree.Dispose();

    private static string BuiltIn => Encoding.UTF8.GetString(NotFoundPage.BuiltIn.Span);

    /// <summary>A request on a connection of its own, which the fast path (when on) sees first.</summary>
    private static async Task<(HttpResponseMessage Response, string Body)> SendAsync(RunningServer server, HttpMethod method, string path, string? accept, string? fetchMode = null)
    {
        using var client = new HttpClient(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.Zero });
        using var request = new HttpRequestMessage(method, new Uri(server.Address, path));
        request.Headers.ConnectionClose = true;
        if (accept is not null)
        {
            request.Headers.TryAddWithoutValidation("Accept", accept);
        }

        if (fetchMode is not null)
        {
            request.Headers.TryAddWithoutValidation("Sec-Fetch-Mode", fetchMode);
        }

        var response = await client.SendAsync(request);
        return (response, await response.Content.ReadAsStringAsync());
    }

    private async Task<RunningServer> StartAsync(bool noFastPath, params string[] more)
        => await RunningServer.StartAsync([_tree.Root, "--no-watch", .. more, .. noFastPath ? new[] { "--no-fast-path" } : []]);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Navigation_WithoutA404File_GetsTheBuiltInPage_OnBothPaths(bool noFastPath)
    {
        await using var server = await StartAsync(noFastPath, "--header", "X-Content-Type-Options: nosniff");

        var (response, body) = await SendAsync(server, HttpMethod.Get, "/missing", "text/html,application/xhtml+xml,*/*;q=0.8");
        using (response)
        {
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            Assert.Equal(BuiltIn, body);
            Assert.Contains("404 Not Found", body);
            Assert.Equal("text/html; charset=utf-8", response.Content.Headers.ContentType!.ToString());
            Assert.Equal(NotFoundPage.BuiltIn.Length, response.Content.Headers.ContentLength);
            Assert.Equal("no-cache", response.Headers.CacheControl!.ToString());
            Assert.Equal("nosniff", Assert.Single(response.Headers.GetValues("X-Content-Type-Options")));
            Assert.Null(response.Headers.ETag);
        }

        var (navigate, navigateBody) = await SendAsync(server, HttpMethod.Get, "/missing.html", null, fetchMode: "navigate");
        using (navigate)
        {
            Assert.Equal(HttpStatusCode.NotFound, navigate.StatusCode);
            Assert.Equal(BuiltIn, navigateBody);
        }

        var (head, headBody) = await SendAsync(server, HttpMethod.Head, "/missing", "text/html");
        using (head)
        {
            Assert.Equal(HttpStatusCode.NotFound, head.StatusCode);
            Assert.Equal(NotFoundPage.BuiltIn.Length, head.Content.Headers.ContentLength);
            Assert.Empty(headBody);
        }
    }

    [Theory]
    [InlineData(false, "*/*")]
    [InlineData(true, "*/*")]
    [InlineData(false, null)]
    [InlineData(false, "image/avif,image/webp,*/*")]
    public async Task NonNavigation_StaysAnEmpty404(bool noFastPath, string? accept)
    {
        await using var server = await StartAsync(noFastPath);

        var (response, body) = await SendAsync(server, HttpMethod.Get, "/missing.png", accept);
        using (response)
        {
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            Assert.Empty(body);
        }
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task The404File_WinsOverTheBuiltInPage(bool noFastPath)
    {
        _tree.Write("404.html", "the site's own");
        await using var server = await StartAsync(noFastPath);

        var (response, body) = await SendAsync(server, HttpMethod.Get, "/missing", "text/html");
        using (response)
        {
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            Assert.Equal("the site's own", body);
        }
    }
}
