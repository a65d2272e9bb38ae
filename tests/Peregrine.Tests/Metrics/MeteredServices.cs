using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Metrics;

namespace Peregrine.Tests.Metrics;

/// <summary>
/// The diagnostics services as AddPeregrine registers them, in a container of their own, so
/// each test has its own meter and its own numbers however many tests run at once.
/// </summary>
internal sealed class MeteredServices : IDisposable
{
    private readonly ServiceProvider _services;

    public MeteredServices()
    {
        var services = new ServiceCollection();
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        _services = services.BuildServiceProvider();
        Metrics = _services.GetRequiredService<PeregrineMetrics>();
    }

    public PeregrineMetrics Metrics { get; }

    /// <summary>The exporter, created (and so listening) on first use.</summary>
    public PrometheusExporter Exporter => _services.GetRequiredService<PrometheusExporter>();

    public string Scrape()
    {
        var text = Exporter.Scrape();
        PrometheusText.AssertWellFormed(text);
        return text;
    }

    public void Dispose() => _services.Dispose();
}
