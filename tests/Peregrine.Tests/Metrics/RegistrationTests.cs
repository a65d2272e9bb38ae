using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Metrics;

namespace Peregrine.Tests.Metrics;

/// <summary>How the diagnostics services are registered and what happens when they are not.</summary>
public sealed class RegistrationTests
{
    [Theory]
    [InlineData("metrics")]
    [InlineData("health")]
    public void UseEndpoint_WithoutAddPeregrine_ThrowsNamingTheFix(string endpoint)
    {
        using var services = new ServiceCollection().BuildServiceProvider();
        var app = new ApplicationBuilder(services);

        var error = Assert.Throws<InvalidOperationException>(() => _ = endpoint == "metrics"
            ? app.UsePeregrineMetrics("/metrics")
            : app.UsePeregrineHealth("/healthz"));

        Assert.Contains("AddPeregrine", error.Message);
    }

    [Fact]
    public void AddPeregrineDiagnostics_CalledTwice_RegistersOneOfEach()
    {
        var services = new ServiceCollection();

        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);

        Assert.Single(services, d => d.ServiceType == typeof(PeregrineMetrics));
        Assert.Single(services, d => d.ServiceType == typeof(PrometheusExporter));
    }

    [Fact]
    public void UsePeregrineMetrics_WithoutAPath_IsRefused()
    {
        var services = new ServiceCollection();
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        using var provider = services.BuildServiceProvider();

        Assert.Throws<ArgumentException>(() => new ApplicationBuilder(provider).UsePeregrineMetrics(default));
    }
}
