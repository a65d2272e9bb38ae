using System.Net;
using System.Net.Http.Headers;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Tests.Infrastructure;
using Peregrine.Validation;

namespace Peregrine.Tests.Fallback;

/// <summary>The 404 page: the body of an empty 404 for a navigation, through a real Kestrel.</summary>
public sealed class NotFoundPageTests : IAsyncLifetime
{
    // Long and repetitive enough that its compressed variants are kept.
    private static readonly string Page = "<!doctype html><title>Not found</title>" + string.Concat(Enumerable.Repeat("<p>Nothing here, nothing at all.</p>", 20));

    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("404.html", Page);
        _tree.Write("index.html", "home");
        _tree.Write("app.js", "app()");
        _host = await PeregrineHost.StartAsync(
            _tree.Root,
            options => options.NotFoundPage = "404.html",
            before: app => app.Map("/api", api => api.Run(context =>
            {
                context.Response.StatusCode = StatusCodes.Status404NotFound;
                return context.Response.WriteAsync("{\"error\":\"no such item\"}");
            })),
            fastPath: true);
        await _host.Services.GetRequiredService<Compressor>().WhenIdle();
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/missing")]
    [InlineData("/does-not-exist.html")]
    [InlineData("/deep/down/missing.css")]
    public async Task Navigation_ToMissingPath_GetsThePageWithStatus404(string path)
    {
        using var request = Navigations.Request(HttpMethod.Get, path);
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(Page, await response.Content.ReadAsStringAsync());
        Assert.Equal("text/html; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        Assert.Equal(Page.Length, response.Content.Headers.ContentLength);
        Assert.Equal("no-cache", response.Headers.CacheControl!.ToString());

        // No validators: nothing can turn the page into a 304 or keep it as the resource's content.
        Assert.Null(response.Headers.ETag);
        Assert.Null(response.Content.Headers.LastModified);
        Assert.False(response.Headers.Contains("Accept-Ranges"));
    }

    [Fact]
    public async Task SecFetchModeNavigate_WithoutHtmlInAccept_IsANavigation()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/missing");
        request.Headers.TryAddWithoutValidation("Sec-Fetch-Mode", "navigate");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(Page, await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("GET", "*/*")]
    [InlineData("GET", "image/avif,image/webp,*/*")]
    [InlineData("GET", "")]
    [InlineData("POST", "text/html")]
    [InlineData("DELETE", "text/html")]
    public async Task NonNavigation_ToMissingPath_StaysAnEmpty404(string method, string accept)
    {
        using var request = new HttpRequestMessage(new HttpMethod(method), "/missing.png");
        if (accept.Length > 0)
        {
            request.Headers.Accept.ParseAdd(accept);
        }

        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Head_Navigation_GetsTheFieldsWithoutTheBody()
    {
        using var request = Navigations.Request(HttpMethod.Head, "/missing");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(Page.Length, response.Content.Headers.ContentLength);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Theory]
    [InlineData("If-None-Match", "*")]
    [InlineData("If-Modified-Since", "Fri, 01 Jan 2100 00:00:00 GMT")]
    [InlineData("Range", "bytes=0-3")]
    public async Task PreconditionsAndRanges_AreIgnored_TheWhole404IsSent(string name, string value)
    {
        using var request = Navigations.Request(HttpMethod.Get, "/missing");
        request.Headers.TryAddWithoutValidation(name, value);
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(Page, await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Page_FollowsCompressionNegotiation()
    {
        using var request = Navigations.Request(HttpMethod.Get, "/missing");
        request.Headers.AcceptEncoding.ParseAdd("br");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("br", Assert.Single(response.Content.Headers.ContentEncoding));
        Assert.Contains("Accept-Encoding", response.Headers.Vary);
        await using var decoded = new System.IO.Compression.BrotliStream(await response.Content.ReadAsStreamAsync(), System.IO.Compression.CompressionMode.Decompress);
        Assert.Equal(Page, await new StreamReader(decoded).ReadToEndAsync());
    }

    [Fact]
    public async Task NextMiddleware_ThatWritesIts404_KeepsIt()
    {
        using var request = Navigations.Request(HttpMethod.Get, "/api/items/7");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal("{\"error\":\"no such item\"}", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task ExistingFiles_AreServedAsEver()
    {
        using var request = Navigations.Request(HttpMethod.Get, "/");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("home", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task FastPath_HandsTheMissToThePipeline_WhichSendsThePage()
    {
        using var client = new HttpClient(new SocketsHttpHandler { PooledConnectionLifetime = TimeSpan.Zero });
        using var request = Navigations.Request(HttpMethod.Get, new Uri(_host.Address, "/missing").ToString());
        request.Headers.ConnectionClose = true;
        using var response = await client.SendAsync(request);

        // Only the pipeline sends the page: the fast path hands every miss on.
        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.Equal(Page, await response.Content.ReadAsStringAsync());
    }
}

/// <summary>The 404 page beside the SPA fallback, under a mount point, and when the file is missing.</summary>
public sealed class NotFoundPageInterplayTests : IDisposable
{
    private readonly TempTree _tree = new();

    public NotFoundPageInterplayTests()
    {
        _tree.Write("index.html", "<div id=app></div>");
        _tree.Write("404.html", "gone");
    }

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task WithSpaFallback_RoutesGetTheShell_MissingFilesGetThePage()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.SpaFallback = "index.html";
            options.NotFoundPage = "404.html";
        });

        Assert.Equal((HttpStatusCode.OK, "<div id=app></div>"), await host.Client.NavigateAsync("/users/42"));
        Assert.Equal((HttpStatusCode.NotFound, "gone"), await host.Client.NavigateAsync("/missing.html"));
    }

    [Fact]
    public async Task UnderAMountPoint_OnlyMissesUnderIt_GetThePage()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.RequestPath = "/static";
            options.NotFoundPage = "404.html";
        });

        Assert.Equal((HttpStatusCode.NotFound, "gone"), await host.Client.NavigateAsync("/static/missing"));
        Assert.Equal((HttpStatusCode.NotFound, ""), await host.Client.NavigateAsync("/elsewhere"));
    }

    [Fact]
    public async Task PageNotInTheRoot_LeavesThe404Empty()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options => options.NotFoundPage = "errors/404.html");

        Assert.Equal((HttpStatusCode.NotFound, ""), await host.Client.NavigateAsync("/missing"));
    }

    [Fact]
    public async Task PageTooLargeForMemory_IsReadFromDisk()
    {
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.NotFoundPage = "404.html";
            options.MaxCachedFileSize = 0;
        });

        Assert.Equal((HttpStatusCode.NotFound, "gone"), await host.Client.NavigateAsync("/missing"));
    }

    [Theory]
    [InlineData("")]
    [InlineData("/404.html")]
    [InlineData("../404.html")]
    [InlineData("a\\404.html")]
    public void BadPage_IsRefusedAtStartUp(string page)
    {
        var errors = PeregrineOptionsValidator.Collect(new PeregrineOptions { Root = _tree.Root, NotFoundPage = page });

        Assert.Contains(errors, e => e.StartsWith("NotFoundPage:", StringComparison.Ordinal));
    }
}
