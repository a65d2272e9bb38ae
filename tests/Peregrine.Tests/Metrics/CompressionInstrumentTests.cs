using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Metrics;

/// <summary>peregrine.compression.pending, .done and .final at /metrics.</summary>
public sealed class CompressionInstrumentTests : IDisposable
{
    private readonly TempTree _tree = new();

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task AfterCompression_ShowsNothingPendingEveryFileDoneAndFinal()
    {
        for (var i = 0; i < 3; i++)
        {
            _tree.Write($"page{i}.html", string.Concat(Enumerable.Repeat("<p>compressible text</p>", 200)));
        }

        _tree.Write("photo.jpg", "not negotiable");
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app =>
            {
                app.UsePeregrineMetrics("/metrics");
                app.UsePeregrine();
            });
        await host.Services.GetRequiredService<FileCatalog>().Ready;
        await host.Services.GetRequiredService<Compressor>().WhenIdle();

        var text = await host.Client.GetStringAsync("/metrics");

        PrometheusText.AssertWellFormed(text);
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_compression_pending"));
        Assert.Equal(3, PrometheusText.Sample(text, "peregrine_compression_done_total"));
        Assert.Equal(1, PrometheusText.Sample(text, "peregrine_compression_final"));
    }

    [Fact]
    public void BeforeAnyIndex_IsNotFinal()
    {
        var services = new ServiceCollection();
        services.AddLogging();
        services.AddPeregrine(o => o.Root = _tree.Root);
        using var provider = services.BuildServiceProvider();

        // The catalog exists, its first index has not run.
        _ = provider.GetRequiredService<Compressor>();
        var text = provider.GetRequiredService<PrometheusExporter>().Scrape();

        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_compression_final"));
    }
}
