using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Peregrine.Compression;
using Peregrine.Health;
using Peregrine.Live;
using Peregrine.Metrics;

// Beside UsePeregrine: an application that can call one can call these.
namespace Microsoft.AspNetCore.Builder;

/// <summary>Health and metrics endpoints for an application that serves files with Peregrine.</summary>
public static class PeregrineDiagnosticsExtensions
{
    /// <summary>
    /// Answers GET and HEAD on <paramref name="path"/> with Peregrine's metrics in the
    /// Prometheus text format (version 0.0.4): request counts by status code, body bytes,
    /// memory hits and disk reads, bytes saved by compression, files indexed. Other requests
    /// go on to the next middleware. The same numbers are on the <c>Peregrine</c> meter for
    /// any other exporter, such as OpenTelemetry's.
    /// </summary>
    /// <remarks>The endpoint has no access control; expose it only where its readers should reach it.</remarks>
    public static IApplicationBuilder UsePeregrineMetrics(this IApplicationBuilder app, PathString path)
    {
        ArgumentNullException.ThrowIfNull(app);
        ThrowIfNotAPath(path);
        var services = app.ApplicationServices;

        // The exporter is resolved here, not at registration: an application that never asks
        // for the endpoint has no listener on the meter and pays nothing for one.
        var exporter = services.GetService<PrometheusExporter>()
            ?? throw new InvalidOperationException($"Call services.AddPeregrine(...) before app.{nameof(UsePeregrineMetrics)}().");

        // Constructed directly rather than through UseMiddleware<T>: no reflection.
        return app.Use(next => new MetricsEndpoint(next, exporter, path).Invoke);
    }

    /// <summary>
    /// Answers GET and HEAD on <paramref name="path"/> with Peregrine's readiness, as JSON and
    /// with <c>Cache-Control: no-store</c>: 200 <c>{"status":"ready","files":N,"generation":G,"compression":{...}}</c>
    /// once the first index is complete (with compression progress: pending, upgrading, done, final), 503 <c>{"status":"starting"}</c> before, and 503
    /// <c>{"status":"failed"}</c> if it failed. Other requests go on to the next middleware.
    /// </summary>
    /// <remarks>
    /// This is readiness: ready means the first index is complete. Liveness needs no path of its
    /// own: a process that answers at all, with any status, is live.
    /// </remarks>
    public static IApplicationBuilder UsePeregrineHealth(this IApplicationBuilder app, PathString path)
    {
        ArgumentNullException.ThrowIfNull(app);
        ThrowIfNotAPath(path);
        var catalog = app.ApplicationServices.GetService<FileCatalog>()
            ?? throw new InvalidOperationException($"Call services.AddPeregrine(...) before app.{nameof(UsePeregrineHealth)}().");

        var compressor = app.ApplicationServices.GetRequiredService<Compressor>();
        var copied = Peregrine.Instances.PeregrineInstances.SourceOf(app.ApplicationServices, "").Copied;
        return app.Use(next => new HealthEndpoint(next, catalog, compressor, path, copied).Invoke);
    }

    /// <summary>
    /// Adds the readiness of a Peregrine instance to ASP.NET Core's health checks (for
    /// <c>app.MapHealthChecks(...)</c>): healthy once its first index is complete, unhealthy
    /// (or <paramref name="failureStatus"/>) while it is built and if it failed, as
    /// <see cref="UsePeregrineHealth"/> answers. The instance indexes once it is served
    /// (<c>UsePeregrine</c> or <c>MapPeregrine</c>).
    /// </summary>
    /// <param name="builder">The health checks builder.</param>
    /// <param name="instance">The instance's name given to <c>AddPeregrine</c>; null for the unnamed one.</param>
    /// <param name="name">The check's name in the health report. Default: <c>peregrine</c>, or <c>peregrine:INSTANCE</c>.</param>
    /// <param name="failureStatus">The status reported when not ready. Default: <see cref="HealthStatus.Unhealthy"/>.</param>
    /// <param name="tags">Tags to filter checks by (such as <c>ready</c>).</param>
    public static IHealthChecksBuilder AddPeregrineCheck(this IHealthChecksBuilder builder, string? instance = null, string? name = null, HealthStatus? failureStatus = null, IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        instance ??= "";
        name ??= instance.Length == 0 ? "peregrine" : "peregrine:" + instance;
        return builder.Add(new HealthCheckRegistration(
            name,
            sp => new PeregrineHealthCheck(Peregrine.Instances.PeregrineInstances.Resolve(sp, instance, "app.MapHealthChecks(...)").Catalog),
            failureStatus,
            tags));
    }

    /// <summary>
    /// Registers <see cref="PeregrineMetrics"/> and <see cref="PrometheusExporter"/> as
    /// singletons. Called by <c>AddPeregrine</c>; safe to call more than once.
    /// </summary>
    internal static void AddPeregrineDiagnostics(IServiceCollection services)
    {
        // IMeterFactory; hosts built with WebApplication or Host already have it.
        services.AddMetrics();

        // Factories rather than type registrations: nothing for the container to discover by
        // reflection.
        services.TryAddSingleton(static sp =>
        {
            var metrics = new PeregrineMetrics(sp.GetRequiredService<System.Diagnostics.Metrics.IMeterFactory>());

            // Read at collection time from the instances' registry, which holds the catalogs and
            // compressors as they are made: nothing is resolved here, so no catalog or compressor
            // ever waits on the metrics, and every instance is counted.
            if (sp.GetService<Peregrine.Instances.PeregrineInstances>() is { } instances)
            {
                metrics.SetFilesIndexedSource(instances.FilesIndexed);
                metrics.SetCompressionSource(instances.CompressionTotals);
            }

            return metrics;
        });
        services.TryAddSingleton(static sp => new PrometheusExporter(sp.GetRequiredService<PeregrineMetrics>()));
    }

    private static void ThrowIfNotAPath(PathString path)
    {
        if (!path.HasValue)
        {
            throw new ArgumentException("A path is required, such as \"/metrics\" or \"/healthz\".", nameof(path));
        }
    }
}
