using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Health;

/// <summary>AddHealthChecks().AddPeregrineCheck() with MapHealthChecks: ready once the first index is in force.</summary>
public sealed class PeregrineHealthCheckTests : IDisposable
{
    private readonly TempTree _tree = new();

    public PeregrineHealthCheckTests() => _tree.Write("index.html", "home");

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task HealthCheck_BeforeTheFirstIndex_IsUnhealthy_AndAfterIt_Healthy()
    {
        // No UsePeregrine: nothing starts the index until the test does.
        await using var host = await AppHost.StartAsync(
            b =>
            {
                b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; });
                b.Services.AddHealthChecks().AddPeregrineCheck();
            },
            app => AppHost.Routed(app, a => a.MapHealthChecks("/health")));

        using var before = await host.Client.GetAsync("/health");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, before.StatusCode);
        Assert.Equal("Unhealthy", await before.Content.ReadAsStringAsync());

        var catalog = host.Services.GetRequiredService<FileCatalog>();
        catalog.Start();
        await catalog.Ready;

        using var after = await host.Client.GetAsync("/health");
        Assert.Equal(HttpStatusCode.OK, after.StatusCode);
        Assert.Equal("Healthy", await after.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task HealthCheck_ForANamedInstance_FollowsThatInstance()
    {
        await using var host = await AppHost.StartAsync(
            b =>
            {
                b.Services.AddPeregrine("docs", o => { o.Root = _tree.Root; o.RequestPath = "/docs"; o.Watch.Enabled = false; });
                b.Services.AddHealthChecks().AddPeregrineCheck("docs");
            },
            app => AppHost.Routed(app, a =>
            {
                a.UsePeregrine("docs");
                a.MapHealthChecks("/health");
            }));
        await host.Services.GetRequiredKeyedService<FileCatalog>("docs").Ready;

        using var response = await host.Client.GetAsync("/health");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task HealthCheck_WhenTheFirstIndexFailed_IsUnhealthy()
    {
        var root = _tree.Write("gone/index.html", "x");
        await using var host = await AppHost.StartAsync(
            b =>
            {
                b.Services.AddPeregrine(o => { o.Root = Path.GetDirectoryName(root)!; o.Watch.Enabled = false; });
                b.Services.AddHealthChecks().AddPeregrineCheck();
            },
            app => AppHost.Routed(app, a => a.MapHealthChecks("/health")));

        // Validated at start; removed before the index runs, so the first index fails.
        Directory.Delete(Path.GetDirectoryName(root)!, recursive: true);
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        catalog.Start();
        await Assert.ThrowsAnyAsync<Exception>(() => catalog.Ready);

        using var response = await host.Client.GetAsync("/health");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
    }
}
