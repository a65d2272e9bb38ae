using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Peregrine.Server.Auth;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Auth;

/// <summary>Under Basic authentication no response tells a shared cache to keep it (RFC 9111 §3.5).</summary>
public sealed class PrivateCachingTests : IDisposable
{
    private readonly TempTree _tree = new();

    public PrivateCachingTests()
    {
        _tree.Write("index.html", "home");
        _tree.Write("app.3f9a1c2b.js", "app()");
        _tree.Write("assets/site.css", "body{}");
        _tree.Write("docs/guide.html", "guide");
    }

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData("public, max-age=31536000, immutable", "private, max-age=31536000, immutable")]
    [InlineData("max-age=60, PUBLIC", "max-age=60, private")]
    [InlineData("public, private, max-age=60", "private, max-age=60")]
    [InlineData("no-store, public", "no-store")]
    [InlineData("max-age=60, must-revalidate", "private, max-age=60, must-revalidate")]
    [InlineData("s-maxage=600", "private, s-maxage=600")]
    [InlineData("no-cache", "no-cache")]
    [InlineData("private, max-age=60", "private, max-age=60")]
    [InlineData("max-age=60, publicity", "max-age=60, publicity")]
    [InlineData("", "")]
    public void MakePrivate_LeavesNoDirectiveThatLetsASharedCacheReuseIt(string value, string expected)
        => Assert.Equal(expected, PrivateCaching.MakePrivate(value));

    [Theory]
    [InlineData("/app.3f9a1c2b.js", "private, max-age=31536000, immutable")]
    [InlineData("/assets/site.css", "private, max-age=600")]
    [InlineData("/docs/guide.html", "private, max-age=60, must-revalidate")]
    [InlineData("/index.html", "no-cache")]
    public async Task BasicAuth_FingerprintedFilesAndCacheRules_ArePrivate(string path, string expected)
    {
        // Under authentication every request takes Kestrel and the middleware (the server turns
        // the fast path off, so that every request is checked); the Cache-Control is decided at
        // start-up, from the same options the fast path would read.
        await using var server = await RunningServer.StartAsync(
            _tree.Root, "--basic-auth", "alice:pw", "--allow-insecure-auth",
            "--cache", "assets/**=public, max-age=600", "--cache", "docs/**=max-age=60, must-revalidate");
        using var client = server.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes("alice:pw")));

        using var response = await client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(expected, response.Headers.NonValidated["Cache-Control"].ToString());
    }

    [Fact]
    public async Task BasicAuth_AConfiguredCacheControlHeader_IsPrivateToo()
    {
        await using var server = await RunningServer.StartAsync(
            _tree.Root, "--basic-auth", "alice:pw", "--allow-insecure-auth", "--header", "Cache-Control: public, max-age=60");
        using var client = server.CreateClient();
        client.DefaultRequestHeaders.Authorization = new AuthenticationHeaderValue("Basic", Convert.ToBase64String(Encoding.UTF8.GetBytes("alice:pw")));

        using var response = await client.GetAsync("/index.html");

        Assert.Equal("private, max-age=60", response.Headers.NonValidated["Cache-Control"].ToString());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task WithoutAuth_PublicStays_OnBothPaths(bool noFastPath)
    {
        await using var server = await RunningServer.StartAsync(
            [_tree.Root, "--cache", "assets/**=public, max-age=600", .. noFastPath ? new[] { "--no-fast-path" } : []]);
        using var client = server.CreateClient();

        using var fingerprinted = await client.GetAsync("/app.3f9a1c2b.js");
        using var ruled = await client.GetAsync("/assets/site.css");

        Assert.Equal("public, max-age=31536000, immutable", fingerprinted.Headers.NonValidated["Cache-Control"].ToString());
        Assert.Equal("public, max-age=600", ruled.Headers.NonValidated["Cache-Control"].ToString());
    }
}
