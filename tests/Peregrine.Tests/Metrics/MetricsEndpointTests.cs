using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Metrics;

/// <summary>/metrics serves the Prometheus text format from a real Kestrel.</summary>
public sealed class MetricsEndpointTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private DiagnosticsHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "<h1>home</h1>");
        _tree.Write("app.js", "console.log(1)");
        _tree.Write("css/site.css", "body{}");
        _host = await DiagnosticsHost.StartAsync(_tree.Root);
        await _host.Services.GetRequiredService<FileCatalog>().Ready;
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task Get_ServesPrometheusTextFormat004_NeverCached()
    {
        using var response = await _host.Client.GetAsync("/metrics");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        Assert.True(response.Headers.CacheControl!.NoStore);
        var text = await response.Content.ReadAsStringAsync();
        PrometheusText.AssertWellFormed(text);
        Assert.Contains("# TYPE peregrine_requests_total counter\n", text);
    }

    [Fact]
    public async Task Get_ShowsTheFilesOfTheIndexInForce()
    {
        var text = await _host.Client.GetStringAsync("/metrics");

        Assert.Equal(3, PrometheusText.Sample(text, "peregrine_files_indexed"));
    }

    [Fact]
    public async Task Get_ShowsTheProcesssMemoryGcAndThreads()
    {
        var text = await _host.Client.GetStringAsync("/metrics");
        PrometheusText.AssertWellFormed(text);
        foreach (var name in new[] { "process_resident_memory_bytes", "process_threads", "dotnet_gc_heap_size_bytes", "dotnet_gc_committed_bytes", "dotnet_gc_fragmented_bytes", "dotnet_total_memory_bytes" })
        {
            var line = text.Split('\n').Single(l => l.StartsWith(name + " ", StringComparison.Ordinal));
            Assert.True(long.Parse(line[(name.Length + 1)..], System.Globalization.CultureInfo.InvariantCulture) > 0, line);
        }

        Assert.Contains("dotnet_collection_count_total{generation=\"0\"} ", text);
    }

    [Fact]
    public async Task Get_ShowsWhatTheHostsMetricsRecorded()
    {
        var metrics = _host.Services.GetRequiredService<PeregrineMetrics>();
        var before = await _host.Client.GetStringAsync("/metrics");

        metrics.Served(404, 0, fromMemory: false, compressionSaved: 0);
        metrics.Served(200, 500, fromMemory: false, compressionSaved: 250);

        var after = await _host.Client.GetStringAsync("/metrics");
        Assert.Equal(1, Delta(before, after, "peregrine_requests_total{http_response_status_code=\"404\"}"));
        Assert.Equal(1, Delta(before, after, "peregrine_cache_misses_total"));
        Assert.Equal(500, Delta(before, after, "peregrine_response_body_size_bytes_total"));
        Assert.Equal(250, Delta(before, after, "peregrine_compression_saved_bytes_total"));
    }

    [Fact]
    public async Task Head_ReturnsTheHeadersWithoutABody()
    {
        using var head = await _host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/metrics"));

        Assert.Equal(HttpStatusCode.OK, head.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", head.Content.Headers.ContentType!.ToString());
        Assert.Empty(await head.Content.ReadAsByteArrayAsync());
    }

    /// <summary>
    /// Needs PeregrineMiddleware to call <see cref="PeregrineMetrics.Served"/> for each response,
    /// which the middleware's owner wires; until then this fails, and that is the signal.
    /// </summary>
    [Fact]
    public async Task Get_AfterAFileIsServed_CountsA200()
    {
        using (var file = await _host.Client.GetAsync("/app.js"))
        {
            Assert.Equal(HttpStatusCode.OK, file.StatusCode);
            await file.Content.ReadAsByteArrayAsync();
        }

        var text = await _host.Client.GetStringAsync("/metrics");

        Assert.True(PrometheusText.Sample(text, "peregrine_requests_total{http_response_status_code=\"200\"}") >= 1, text);
        Assert.True(PrometheusText.Sample(text, "peregrine_response_body_size_bytes_total") >= "console.log(1)".Length, text);
    }

    private static long Delta(string before, string after, string series)
        => (PrometheusText.Sample(after, series) ?? 0) - (PrometheusText.Sample(before, series) ?? 0);
}
