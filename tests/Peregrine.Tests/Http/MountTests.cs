using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

public sealed class MountTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("css/site.css", "body{}");
        _host = await PeregrineHost.StartAsync(_tree.Root, options => options.RequestPath = "/static");
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/static/css/site.css", "body{}")]
    [InlineData("/STATIC/css/site.css", "body{}")]
    [InlineData("/static/", "home")]
    public async Task Get_UnderMountPoint_ServesFile(string path, string body)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(body, await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("/css/site.css")]
    [InlineData("/staticcss/site.css")]
    [InlineData("/static2/css/site.css")]
    public async Task Get_OutsideMountPoint_PassesToNextMiddleware(string path)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Fact]
    public async Task Get_MountPointWithoutSlash_RedirectsToSlash()
    {
        using var response = await _host.Client.GetAsync("/static?a=1");

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal("/static/?a=1", response.Headers.Location!.OriginalString);
    }
}
