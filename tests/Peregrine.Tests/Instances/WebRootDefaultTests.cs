using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Instances;

/// <summary>Root left empty serves the application's web root, as UseStaticFiles does.</summary>
public sealed class WebRootDefaultTests : IDisposable
{
    private readonly TempTree _content = new();

    public void Dispose() => _content.Dispose();

    [Fact]
    public async Task RootLeftEmpty_ServesTheWebRoot()
    {
        _content.Write("wwwroot/index.html", "from wwwroot");
        _content.Write("secret.txt", "content root, not web root");

        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => o.Watch.Enabled = false),
            app => app.UsePeregrine(),
            options: new WebApplicationOptions { ContentRootPath = _content.Root });

        Assert.Equal("from wwwroot", await host.Client.GetStringAsync("/index.html"));
        using var outside = await host.Client.GetAsync("/secret.txt");
        Assert.Equal(HttpStatusCode.NotFound, outside.StatusCode);
    }

    [Fact]
    public async Task RootSet_WinsOverTheWebRoot()
    {
        _content.Write("wwwroot/index.html", "from wwwroot");
        var other = Path.GetDirectoryName(_content.Write("other/index.html", "from other"))!;

        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = other; o.Watch.Enabled = false; }),
            app => app.UsePeregrine(),
            options: new WebApplicationOptions { ContentRootPath = _content.Root });

        Assert.Equal("from other", await host.Client.GetStringAsync("/index.html"));
    }

    [Fact]
    public async Task RootLeftEmpty_WithoutAWebRootFolder_StopsStartUpNamingRoot()
    {
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { ContentRootPath = _content.Root });
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddPeregrine(_ => { });
        await using var app = builder.Build();
        // Options are validated where the instance is first used (here UsePeregrine), or at start.
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() =>
        {
            app.UsePeregrine();
            return app.StartAsync();
        });

        var failure = Assert.Single(error.Failures);
        Assert.StartsWith("Root: a folder to serve is required", failure);
        Assert.Contains("wwwroot", failure);
    }
}
