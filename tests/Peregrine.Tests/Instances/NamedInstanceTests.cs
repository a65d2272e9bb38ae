using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Instances;

/// <summary>Several Peregrine instances in one application, each with its own root and catalog.</summary>
public sealed class NamedInstanceTests : IDisposable
{
    private readonly TempTree _static = new();
    private readonly TempTree _downloads = new();

    public NamedInstanceTests()
    {
        _static.Write("app.css", "body{}");
        _static.Write("same.txt", "from static");
        _downloads.Write("tool.zip", "zip bytes");
        _downloads.Write("same.txt", "from downloads");
    }

    public void Dispose()
    {
        _static.Dispose();
        _downloads.Dispose();
    }

    private Task<AppHost> StartTwoAsync(bool fastPath = false) => AppHost.StartAsync(
        b => b.Services
            .AddPeregrine("static", o => { o.Root = _static.Root; o.RequestPath = "/static"; o.Watch.Enabled = false; })
            .AddPeregrine("downloads", o => { o.Root = _downloads.Root; o.RequestPath = "/downloads"; o.Watch.Enabled = false; }),
        app => app.UsePeregrine("static").UsePeregrine("downloads"),
        fastPath);

    [Fact]
    public async Task TwoNamedInstances_ServeTheirOwnRootsUnderTheirOwnPaths()
    {
        await using var host = await StartTwoAsync();

        Assert.Equal("body{}", await host.Client.GetStringAsync("/static/app.css"));
        Assert.Equal("zip bytes", await host.Client.GetStringAsync("/downloads/tool.zip"));
        Assert.Equal("from static", await host.Client.GetStringAsync("/static/same.txt"));
        Assert.Equal("from downloads", await host.Client.GetStringAsync("/downloads/same.txt"));

        // Each instance holds only its own files: the other's are not under its path.
        using var crossed = await host.Client.GetAsync("/static/tool.zip");
        Assert.Equal(HttpStatusCode.NotFound, crossed.StatusCode);
        Assert.True(crossed.Headers.Contains(AppHost.NextHeader));
    }

    [Fact]
    public async Task TwoNamedInstances_HaveTheirOwnCatalogs()
    {
        await using var host = await StartTwoAsync();

        var one = host.Services.GetRequiredKeyedService<FileCatalog>("static");
        var two = host.Services.GetRequiredKeyedService<FileCatalog>("downloads");
        await one.Ready;
        await two.Ready;

        Assert.NotSame(one, two);
        Assert.Equal(2, one.Current!.FileCount);
        Assert.Equal(_downloads.Root, two.Options.Root);
    }

    [Fact]
    public async Task NamedAndUnnamed_ServeSideBySide()
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services
                .AddPeregrine(o => { o.Root = _static.Root; o.Watch.Enabled = false; })
                .AddPeregrine("downloads", o => { o.Root = _downloads.Root; o.RequestPath = "/downloads"; o.Watch.Enabled = false; }),
            app => app.UsePeregrine("downloads").UsePeregrine());

        Assert.Equal("from static", await host.Client.GetStringAsync("/same.txt"));
        Assert.Equal("from downloads", await host.Client.GetStringAsync("/downloads/same.txt"));
    }

    [Fact]
    public void UsePeregrine_WithANameNeverAdded_ThrowsNamingTheFix()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Services.AddPeregrine("static", o => o.Root = _static.Root);
        using var app = builder.Build();

        var error = Assert.Throws<InvalidOperationException>(() => app.UsePeregrine("docs"));

        Assert.Contains("AddPeregrine(\"docs\"", error.Message);
    }

    [Fact]
    public async Task NamedInstance_WithABadOption_StopsStartUpNamingTheInstanceAndTheOption()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddPeregrine("docs", o => o.Root = Path.Combine(_static.Root, "missing"));
        await using var app = builder.Build();
        // Options are validated where the instance is first used (here UsePeregrine), or at start.
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() =>
        {
            app.UsePeregrine("docs");
            return app.StartAsync();
        });

        Assert.Contains(error.Failures, f => f.StartsWith("Peregrine 'docs': Root:", StringComparison.Ordinal));
    }

    [Fact]
    public async Task FastPath_WithInstancesMountedUnderPaths_HandsThemToThePipeline()
    {
        // Only named instances under mount points: the fast path has nothing of its own to
        // serve, and every answer is the pipeline's.
        await using var host = await StartTwoAsync(fastPath: true);

        using var response = await host.GetOnNewConnectionAsync("/static/app.css");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(1, host.PipelineRequests);
    }

    [Fact]
    public async Task FastPath_ServesTheRootInstance_AndHandsOffAnotherInstancesPath()
    {
        // The unnamed instance's root also holds downloads/same.txt; the pipeline answers that
        // path from the "downloads" instance, mounted first, so the fast path must not.
        _static.Write("downloads/same.txt", "shadowed");
        await using var host = await AppHost.StartAsync(
            b => b.Services
                .AddPeregrine(o => { o.Root = _static.Root; o.Watch.Enabled = false; })
                .AddPeregrine("downloads", o => { o.Root = _downloads.Root; o.RequestPath = "/downloads"; o.Watch.Enabled = false; }),
            app => app.UsePeregrine("downloads").UsePeregrine(),
            fastPath: true);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var root = await host.GetOnNewConnectionAsync("/app.css");
        Assert.Equal(HttpStatusCode.OK, root.StatusCode);
        Assert.Equal(0, host.PipelineRequests);

        using var other = await host.GetOnNewConnectionAsync("/downloads/same.txt");
        Assert.Equal("from downloads", await other.Content.ReadAsStringAsync());
        Assert.Equal(1, host.PipelineRequests);
    }
}
