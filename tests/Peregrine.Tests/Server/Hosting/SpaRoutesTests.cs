using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// <c>--spa</c> is the last step of nginx's and Caddy's <c>try_files</c>, and <c>--clean-urls</c>
/// the <c>$uri.html</c> step before it (docs/server.md, "Missing pages and clean URLs"): each
/// flag adds its own step, so a page is found by its clean URL only when both are given.
/// </summary>
public sealed class SpaRoutesTests : IDisposable
{
    private readonly TempTree _tree = new();

    public SpaRoutesTests()
    {
        _tree.Write("index.html", "shell");
        _tree.Write("about.html", "about us");
        _tree.Write("404.html", "gone");
    }

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task SpaAlone_LikeTryFilesUriThenIndex_GivesTheShellAtAPagesCleanUrl()
    {
        // try_files $uri $uri/ /index.html; Caddy's try_files {path} /index.html.
        await using var server = await RunningServer.StartAsync(_tree.Root, "--spa");
        using var client = server.CreateClient();

        Assert.Equal((HttpStatusCode.OK, "shell"), await client.NavigateAsync("/about"));
        Assert.Equal((HttpStatusCode.OK, "about us"), await client.NavigateAsync("/about.html"));
        Assert.Equal((HttpStatusCode.OK, "shell"), await client.NavigateAsync("/users/42"));
        Assert.Equal((HttpStatusCode.NotFound, "gone"), await client.NavigateAsync("/missing.png"));
    }

    [Fact]
    public async Task SpaWithCleanUrls_LikeTryFilesUriThenUriHtmlThenIndex_GivesThePageAtItsCleanUrl()
    {
        // try_files $uri $uri.html /index.html; Caddy's try_files {path} {path}.html /index.html.
        await using var server = await RunningServer.StartAsync(_tree.Root, "--spa", "--clean-urls");
        using var client = server.CreateClient();

        Assert.Equal((HttpStatusCode.OK, "about us"), await client.NavigateAsync("/about"));
        Assert.Equal((HttpStatusCode.PermanentRedirect, "/about"), await client.NavigateAsync("/about.html"));
        Assert.Equal((HttpStatusCode.OK, "shell"), await client.NavigateAsync("/users/42"));
        Assert.Equal((HttpStatusCode.NotFound, "gone"), await client.NavigateAsync("/missing.png"));
    }
}
