using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>The fast path answers only what the pipeline would answer the same way: not an instance on a branch.</summary>
public sealed class FastPathScopeTests : IDisposable
{
    private readonly TempTree _tree = new();

    public FastPathScopeTests()
    {
        _tree.Write("app.css", "body{}");
    }

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task UsePeregrineInAMapBranch_ServesUnderTheBranchOnly_OnBothPaths(bool fastPath)
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app => app.Map("/static", branch => branch.UsePeregrine()),
            fastPath);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        // The branch strips /static into PathBase: the middleware serves /static/app.css from the
        // root's app.css, and /app.css never reaches it.
        using var underBranch = await host.GetOnNewConnectionAsync("/static/app.css");
        using var atRoot = await host.GetOnNewConnectionAsync("/app.css");

        Assert.Equal(HttpStatusCode.OK, underBranch.StatusCode);
        Assert.Equal("body{}", await underBranch.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, atRoot.StatusCode);
        Assert.True(atRoot.Headers.Contains(AppHost.NextHeader));

        // Both answers are the pipeline's: the fast path took neither.
        Assert.Equal(2, host.PipelineRequests);
    }

    [Fact]
    public async Task UsePeregrineAtTheRoot_IsStillServedByTheFastPath()
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app => app.UsePeregrine(),
            fastPath: true);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var response = await host.GetOnNewConnectionAsync("/app.css");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(0, host.PipelineRequests);
    }
}
