using System.Net;
using System.Text.Json;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Metrics;

namespace Peregrine.Tests.Health;

/// <summary>
/// /healthz is readiness: 200 once the first index is in force, 503 before it and after it
/// failed, never cached.
/// </summary>
public sealed class HealthEndpointTests : IDisposable
{
    private readonly TempTree _tree = new();

    public HealthEndpointTests()
    {
        _tree.Write("index.html", "<h1>home</h1>");
        _tree.Write("app.js", "console.log(1)");
        _tree.Write("css/site.css", "body{}");
    }

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task Get_AfterTheFirstIndex_IsReadyWithFileCountAndGeneration()
    {
        await using var host = await DiagnosticsHost.StartAsync(_tree.Root);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var response = await host.Client.GetAsync("/healthz");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("application/json", response.Content.Headers.ContentType!.MediaType);
        Assert.True(response.Headers.CacheControl!.NoStore);
        using var json = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        Assert.Equal("ready", json.RootElement.GetProperty("status").GetString());
        Assert.Equal(3, json.RootElement.GetProperty("files").GetInt32());
        Assert.Equal(1, json.RootElement.GetProperty("generation").GetInt32());
    }

    [Fact]
    public async Task Head_AfterTheFirstIndex_Returns200WithLengthAndNoBody()
    {
        await using var host = await DiagnosticsHost.StartAsync(_tree.Root);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        // Compression progress is part of the body: settled first, so both answers are alike.
        await host.Services.GetRequiredService<Peregrine.Compression.Compressor>().WhenIdle();
        using var get = await host.Client.GetAsync("/healthz");

        using var head = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/healthz"));

        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
        Assert.Equal(get.Content.Headers.ContentLength, head.Content.Headers.ContentLength);
        Assert.True(head.Headers.CacheControl!.NoStore);
        Assert.Empty(await head.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Get_BeforeTheFirstIndex_Returns503Starting_ThenReadyOnceItCompletes()
    {
        // Without UsePeregrine nothing starts the index: the catalog stays where it is before
        // its first index completes, for as long as the test needs.
        await using var host = await DiagnosticsHost.StartAsync(_tree.Root, serveFiles: false);

        using (var starting = await host.Client.GetAsync("/healthz"))
        {
            Assert.Equal(HttpStatusCode.ServiceUnavailable, starting.StatusCode);
            Assert.Equal("""{"status":"starting"}""", await starting.Content.ReadAsStringAsync());
            Assert.True(starting.Headers.CacheControl!.NoStore);
        }

        var catalog = host.Services.GetRequiredService<FileCatalog>();
        catalog.Start();
        await catalog.Ready;

        using var ready = await host.Client.GetAsync("/healthz");
        Assert.Equal(HttpStatusCode.OK, ready.StatusCode);
    }

    [Fact]
    public async Task Get_WhenTheFirstIndexFailed_Returns503Failed()
    {
        // The root passes validation, then is gone before the index starts.
        await using var host = await DiagnosticsHost.StartAsync(
            _tree.Root,
            services: s => s.AddSingleton<IHostedService>(new RemoveBeforeStart(_tree.Root)));
        await Assert.ThrowsAnyAsync<Exception>(() => host.Services.GetRequiredService<FileCatalog>().Ready);

        using var response = await host.Client.GetAsync("/healthz");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Equal("""{"status":"failed"}""", await response.Content.ReadAsStringAsync());
    }

    [Theory]
    [InlineData("POST", "/healthz")]
    [InlineData("DELETE", "/healthz")]
    [InlineData("GET", "/healthz/")]
    [InlineData("GET", "/healthz/more")]
    [InlineData("GET", "/healthzz")]
    [InlineData("POST", "/metrics")]
    [InlineData("GET", "/metrics/")]
    public async Task OtherMethodsAndPaths_PassThroughToTheNextMiddleware(string method, string path)
    {
        await using var host = await DiagnosticsHost.StartAsync(_tree.Root);

        using var response = await host.Client.SendAsync(new HttpRequestMessage(new HttpMethod(method), path));

        Assert.True(response.Headers.Contains(DiagnosticsHost.NextHeader), $"{method} {path} was answered, not passed on");
    }

    [Theory]
    [InlineData("/HEALTHZ")]
    [InlineData("/Healthz")]
    public async Task Get_MatchesThePathCaseInsensitively_AsPathStringDoes(string path)
    {
        await using var host = await DiagnosticsHost.StartAsync(_tree.Root);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var response = await host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    /// <summary>Deletes a folder as the host starts: after options validation, before the pipeline is built.</summary>
    private sealed class RemoveBeforeStart(string folder) : IHostedLifecycleService
    {
        public Task StartingAsync(CancellationToken cancellationToken)
        {
            Directory.Delete(folder, recursive: true);
            return Task.CompletedTask;
        }

        public Task StartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StartedAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StoppingAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StoppedAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
