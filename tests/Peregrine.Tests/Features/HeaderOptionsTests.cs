using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Features;

public sealed class HeaderOptionsTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("assets/logo.png", [1, 2, 3]);
        _tree.Write("deep/er/page.html", "page");
        _tree.Write("app.3f9a1c2b.js", "x");
        _host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.Headers["X-Content-Type-Options"] = "nosniff";
            options.Headers["Content-Security-Policy"] = "default-src 'self'";
            options.CacheRules = [new("*.html", "no-store"), new("assets/**", "public, max-age=3600")];
            options.CorsOrigins = ["https://app.example.com"];
        });
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/index.html", "no-store")]
    [InlineData("/deep/er/page.html", "no-store")]
    [InlineData("/assets/logo.png", "public, max-age=3600")]
    [InlineData("/app.3f9a1c2b.js", "public, max-age=31536000, immutable")]
    public async Task CacheRules_FirstMatchingGlobSetsCacheControl(string path, string expected)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(expected, response.Headers.CacheControl!.ToString());
    }

    [Fact]
    public async Task ConfiguredHeaders_AreOnEveryFileResponseIncluding304()
    {
        using var ok = await _host.Client.GetAsync("/index.html");
        using var conditional = new HttpRequestMessage(HttpMethod.Get, "/index.html");
        conditional.Headers.TryAddWithoutValidation("If-None-Match", ok.Headers.ETag!.Tag);
        using var notModified = await _host.Client.SendAsync(conditional);

        foreach (var response in new[] { ok, notModified })
        {
            Assert.Equal("nosniff", response.Headers.GetValues("X-Content-Type-Options").Single());
            Assert.Equal("default-src 'self'", response.Headers.GetValues("Content-Security-Policy").Single());
        }
    }

    [Theory]
    [InlineData("https://app.example.com", true)]
    [InlineData("https://evil.example.com", false)]
    [InlineData(null, false)]
    public async Task Cors_AllowsOnlyTheConfiguredOrigins(string? origin, bool allowed)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, "/index.html");
        if (origin is not null)
        {
            request.Headers.TryAddWithoutValidation("Origin", origin);
        }

        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(allowed, response.Headers.TryGetValues("Access-Control-Allow-Origin", out var values) && values.Single() == origin);
        Assert.Contains("Origin", response.Headers.Vary);
    }

    [Fact]
    public async Task Cors_PreflightFromAllowedOrigin_Gets204WithMethods()
    {
        using var request = new HttpRequestMessage(HttpMethod.Options, "/index.html");
        request.Headers.TryAddWithoutValidation("Origin", "https://app.example.com");
        request.Headers.TryAddWithoutValidation("Access-Control-Request-Method", "GET");
        request.Headers.TryAddWithoutValidation("Access-Control-Request-Headers", "range");
        using var response = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NoContent, response.StatusCode);
        Assert.Equal("https://app.example.com", response.Headers.GetValues("Access-Control-Allow-Origin").Single());
        Assert.Equal("GET, HEAD", response.Headers.GetValues("Access-Control-Allow-Methods").Single());
        Assert.Equal("range", response.Headers.GetValues("Access-Control-Allow-Headers").Single());
    }
}
