using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Indexing;

/// <summary>Clean URLs through a real Kestrel: /about finds about.html, /about.html redirects there.</summary>
public sealed class CleanUrlTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("about.html", "about us");
        _tree.Write("docs/index.html", "docs");
        _tree.Write("docs/setup.html", "setup");
        _tree.Write("team.html", "team page");
        _tree.Write("team/index.html", "team folder");
        _tree.Write("notes", "notes without extension");
        _tree.Write("notes.html", "notes page");
        _tree.Write("café.html", "accents");
        _host = await PeregrineHost.StartAsync(_tree.Root, options => options.CleanUrls = true, fastPath: true);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/about", "about us")]
    [InlineData("/docs/setup", "setup")]
    [InlineData("/docs/", "docs")]
    [InlineData("/team.html", "team page")]
    [InlineData("/notes", "notes without extension")]
    [InlineData("/notes.html", "notes page")]
    [InlineData("/caf%C3%A9", "accents")]
    public async Task Path_ServesThePage(string path, string body)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(body, await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("/about.html", "/about")]
    [InlineData("/about.html?ref=nav&x=1", "/about?ref=nav&x=1")]
    [InlineData("/docs/setup.html", "/docs/setup")]
    [InlineData("/index.html", "/")]
    [InlineData("/docs/index.html?v=2", "/docs/?v=2")]
    [InlineData("/caf%C3%A9.html", "/caf%C3%A9")]
    public async Task HtmlName_RedirectsPermanentlyToTheCleanUrl(string path, string location)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.PermanentRedirect, response.StatusCode);
        Assert.Equal(location, response.Headers.Location!.OriginalString);
        Assert.Equal(0, response.Content.Headers.ContentLength);
    }

    [Fact]
    public async Task FolderOfTheSameName_WinsOverThePage()
    {
        using var response = await _host.Client.GetAsync("/team");

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal("/team/", response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task CleanUrl_IsTheSameRepresentation_AsThePage()
    {
        var snapshot = _host.Services.GetRequiredService<FileCatalog>().Current!;
        Assert.True(snapshot.TryFind("/about", out var clean));
        Assert.True(snapshot.TryFindFile("/about.html", out var page));
        Assert.Same(page, clean);
        Assert.True(snapshot.Holds(page));
        Assert.Single(snapshot.Files, entry => entry.RelativePath == "/about.html");
    }

    [Fact]
    public async Task FastPath_ServesTheCleanUrlItself()
    {
        // The redirects above come from the middleware: the fast path hands them on.
        using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero });
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(_host.Address, "/about"));
        request.Headers.ConnectionClose = true;
        using var requests = new HostingRequests(_host.Services);
        using var response = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("about us", await response.Content.ReadAsStringAsync());
        Assert.Equal(0, requests.Count);
    }
}

/// <summary>Clean URLs off by default, with the SPA fallback, under a mount point, and across a re-index.</summary>
public sealed class CleanUrlInterplayTests : IDisposable
{
    private readonly TempTree _tree = new();

    public CleanUrlInterplayTests()
    {
        _tree.Write("index.html", "<div id=app></div>");
        _tree.Write("about.html", "about us");
    }

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task Off_ByDefault()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root);

        Assert.Equal(HttpStatusCode.NotFound, (await host.Client.NavigateAsync("/about")).Status);
        Assert.Equal((HttpStatusCode.OK, "about us"), await host.Client.NavigateAsync("/about.html"));
    }

    [Fact]
    public async Task WithSpaFallback_PagesWin_RoutesGetTheShell_NotARedirect()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.CleanUrls = true;
            options.SpaFallback = "index.html";
        });

        Assert.Equal((HttpStatusCode.OK, "about us"), await host.Client.NavigateAsync("/about"));
        Assert.Equal((HttpStatusCode.OK, "<div id=app></div>"), await host.Client.NavigateAsync("/users/42"));
        Assert.Equal((HttpStatusCode.PermanentRedirect, "/"), await host.Client.NavigateAsync("/index.html"));
    }

    [Fact]
    public async Task UnderAMountPoint_TheRedirectKeepsIt()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.CleanUrls = true;
            options.RequestPath = "/static";
        });

        Assert.Equal((HttpStatusCode.PermanentRedirect, "/static/about"), await host.Client.NavigateAsync("/static/about.html"));
        Assert.Equal((HttpStatusCode.OK, "about us"), await host.Client.NavigateAsync("/static/about"));
    }

    [Fact]
    public async Task NotFoundPage_UnderCleanUrls_IsStillFound()
    {
        _tree.Write("404.html", "gone");
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.CleanUrls = true;
            options.NotFoundPage = "404.html";
        });

        Assert.Equal((HttpStatusCode.NotFound, "gone"), await host.Client.NavigateAsync("/missing"));
    }

    [Fact]
    public void Reindex_AfterAFolderTakesTheName_ServesThePageUnderItsOwnName()
    {
        var options = new PeregrineOptions { Root = _tree.Root, CleanUrls = true };
        var builder = new CatalogBuilder(options, new MemoryBudget(options.MemoryBudget), NullLogger.Instance);
        var first = builder.Build();
        Assert.True(first.TryFindFile("/about.html", out var page));
        Assert.True(first.TryFind("/about.html", out var redirect));
        Assert.Equal(308, redirect.RedirectStatus);

        _tree.Write("about/index.html", "about folder");
        var rebuilt = builder.Build(first);

        // The unchanged page is reused from the first snapshot, and is a plain file again.
        Assert.True(rebuilt.TryFind("/about.html", out var again));
        Assert.Same(page, again);
        Assert.True(rebuilt.TryFind("/about", out var folder));
        Assert.Equal(301, folder.RedirectStatus);
    }
}
