using Microsoft.Extensions.Diagnostics.HealthChecks;
using Peregrine.Live;

namespace Peregrine.Health;

/// <summary>
/// Readiness of one Peregrine instance for <c>MapHealthChecks</c>: healthy once its first index
/// is in force, unhealthy while it is built or if it failed. Added with
/// <c>AddHealthChecks().AddPeregrineCheck()</c>.
/// </summary>
internal sealed class PeregrineHealthCheck(FileCatalog catalog) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var result = CatalogReadiness.Of(catalog, out var snapshot) switch
        {
            Readiness.Ready => HealthCheckResult.Healthy(
                $"Serving {snapshot!.FileCount} files from {catalog.Options.Root}.",
                new Dictionary<string, object> { ["files"] = snapshot.FileCount, ["generation"] = catalog.Generation }),
            Readiness.Failed => new HealthCheckResult(context.Registration.FailureStatus, $"Indexing {catalog.Options.Root} failed; the reason is in the log.", catalog.Ready.Exception?.InnerException),
            _ => new HealthCheckResult(context.Registration.FailureStatus, $"Indexing {catalog.Options.Root}: not ready yet."),
        };
        return Task.FromResult(result);
    }
}
