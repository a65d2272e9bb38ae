using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>The sample site's 404 page and clean URLs, as the standalone server serves them.</summary>
public sealed class SampleSitePagesTests
{
    private static readonly string Site = Path.Combine(RepositoryRoot.Path, "samples", "site");

    private static async Task<HttpResponseMessage> NavigateAsync(RunningServer server, string path)
    {
        using var client = server.CreateClient();
        using var request = Navigations.Request(HttpMethod.Get, path);
        return await client.SendAsync(request);
    }

    [Theory]
    [InlineData("/does-not-exist.html")]
    [InlineData("/no-such-page")]
    [InlineData("/.env")]
    public async Task MissingPage_Is404_WithTheBodyOf404Html(string path)
    {
        await using var server = await RunningServer.StartAsync(Site);

        using var response = await NavigateAsync(server, path);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(await File.ReadAllTextAsync(Path.Combine(Site, "404.html")), await response.Content.ReadAsStringAsync());
        Assert.Equal("text/html; charset=utf-8", response.Content.Headers.ContentType!.ToString());
    }

    [Fact]
    public async Task NotFoundFlag_NamesAnotherPage()
    {
        await using var server = await RunningServer.StartAsync(Site, "--404", "robots.txt");

        using var response = await NavigateAsync(server, "/missing");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(await File.ReadAllTextAsync(Path.Combine(Site, "robots.txt")), await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task CleanUrls_AboutFindsAboutHtml_AndAboutHtmlRedirects()
    {
        await using var server = await RunningServer.StartAsync(Site, "--clean-urls");

        using var clean = await NavigateAsync(server, "/about");
        Assert.Equal(HttpStatusCode.OK, clean.StatusCode);
        Assert.Equal(await File.ReadAllTextAsync(Path.Combine(Site, "about.html")), await clean.Content.ReadAsStringAsync());

        using var old = await NavigateAsync(server, "/about.html?from=nav");
        Assert.Equal(HttpStatusCode.PermanentRedirect, old.StatusCode);
        Assert.Equal("/about?from=nav", old.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task WithoutCleanUrls_AboutIsTheNotFoundPage()
    {
        await using var server = await RunningServer.StartAsync(Site);

        using var response = await NavigateAsync(server, "/about");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Contains("<h1>404</h1>", await response.Content.ReadAsStringAsync());
    }
}
