using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

public sealed class ServingTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "<h1>home</h1>");
        _tree.Write("css/site.css", "body{}");
        _tree.Write("app.js", "console.log(1)");
        _tree.Write("data.json", "{}");
        _tree.Write("logo.svg", "<svg/>");
        _tree.Write("photo.png", [0x89, 0x50, 0x4e, 0x47]);
        _tree.Write("blob.unknownext", [1, 2, 3]);
        _tree.Write("empty.txt", []);
        _tree.Write("docs/index.html", "<h1>docs</h1>");
        _tree.Write("docs/guide/index.html", "<h1>guide</h1>");
        _tree.Write("nodefault/file.txt", "x");
        _tree.Write("assets/app.3f9a1c2b.js", "fingerprinted");
        _host = await PeregrineHost.StartAsync(_tree.Root);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/index.html", "text/html; charset=utf-8")]
    [InlineData("/css/site.css", "text/css; charset=utf-8")]
    [InlineData("/app.js", "text/javascript; charset=utf-8")]
    [InlineData("/data.json", "application/json; charset=utf-8")]
    [InlineData("/logo.svg", "image/svg+xml; charset=utf-8")]
    [InlineData("/photo.png", "image/png")]
    [InlineData("/blob.unknownext", "application/octet-stream")]
    public async Task Get_KnownFile_ReturnsBytesWithContentTypeAndValidators(string path, string contentType)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(contentType, response.Content.Headers.ContentType!.ToString());
        var expected = await File.ReadAllBytesAsync(Path.Combine(_tree.Root, path.TrimStart('/')));
        Assert.Equal(expected, await response.Content.ReadAsByteArrayAsync());
        Assert.Equal(expected.Length, response.Content.Headers.ContentLength);
        Assert.NotNull(response.Headers.ETag);
        Assert.False(response.Headers.ETag!.IsWeak);
        Assert.NotNull(response.Content.Headers.LastModified);
        Assert.Equal("no-cache", response.Headers.CacheControl!.ToString());
    }

    [Fact]
    public async Task Get_EmptyFile_ReturnsZeroLength()
    {
        using var response = await _host.Client.GetAsync("/empty.txt");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(0, response.Content.Headers.ContentLength);
    }

    [Fact]
    public async Task Head_File_ReturnsSameHeadersAsGetWithoutBody()
    {
        using var get = await _host.Client.GetAsync("/css/site.css");
        using var head = await _host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/css/site.css"));

        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
        Assert.Equal(get.Content.Headers.ContentLength, head.Content.Headers.ContentLength);
        Assert.Equal(get.Content.Headers.ContentType, head.Content.Headers.ContentType);
        Assert.Equal(get.Headers.ETag, head.Headers.ETag);
        Assert.Equal(get.Content.Headers.LastModified, head.Content.Headers.LastModified);
        Assert.Equal(get.Headers.CacheControl, head.Headers.CacheControl);
        Assert.Empty(await head.Content.ReadAsByteArrayAsync());
    }

    [Theory]
    [InlineData("POST")]
    [InlineData("PUT")]
    [InlineData("DELETE")]
    [InlineData("PATCH")]
    [InlineData("OPTIONS")]
    [InlineData("PROPFIND")]
    public async Task OtherMethod_OnFile_Returns405WithAllow(string method)
    {
        // RFC 9110 §15.5.6: a 405 response lists the allowed methods.
        using var response = await _host.Client.SendAsync(new HttpRequestMessage(new HttpMethod(method), "/css/site.css"));

        Assert.Equal(HttpStatusCode.MethodNotAllowed, response.StatusCode);
        Assert.Equal(["GET", "HEAD"], response.Content.Headers.Allow);
    }

    [Fact]
    public async Task OtherMethod_OnUnknownPath_PassesToNextMiddleware()
    {
        using var response = await _host.Client.PostAsync("/nothing-here", null);

        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Theory]
    [InlineData("/missing.txt")]
    [InlineData("/css/missing.css")]
    [InlineData("/nodefault/")]
    [InlineData("/CSS/site.css")]
    public async Task Get_UnknownPath_PassesToNextMiddleware(string path)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Theory]
    [InlineData("/", "<h1>home</h1>")]
    [InlineData("/docs/", "<h1>docs</h1>")]
    [InlineData("/docs/guide/", "<h1>guide</h1>")]
    public async Task Get_DirectoryWithSlash_ServesIndexDocument(string path, string body)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/html; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        Assert.Equal(body, await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("/docs", "/docs/")]
    [InlineData("/docs/guide", "/docs/guide/")]
    [InlineData("/docs?page=2&x=%20", "/docs/?page=2&x=%20")]
    public async Task Get_DirectoryWithoutSlash_RedirectsPermanentlyKeepingQuery(string path, string location)
    {
        // RFC 9110 §15.4.2.
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal(location, response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task Get_DirectoryWithoutDefaultDocument_PassesToNextMiddleware()
    {
        using var response = await _host.Client.GetAsync("/nodefault");

        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Fact]
    public async Task Get_FingerprintedName_IsCachedForAYearAsImmutable()
    {
        using var response = await _host.Client.GetAsync("/assets/app.3f9a1c2b.js");

        Assert.Equal("public, max-age=31536000, immutable", response.Headers.CacheControl!.ToString());
    }

    [Fact]
    public async Task Get_OverHttp2_ServesTheSameBytes()
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionOrLower,
        };
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("body{}", await response.Content.ReadAsStringAsync());
    }
}
