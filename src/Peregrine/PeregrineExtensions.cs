using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Peregrine.Catalog;

namespace Peregrine;

/// <summary>Registration of Peregrine in an ASP.NET Core application.</summary>
public static class PeregrineExtensions
{
    /// <summary>
    /// Adds Peregrine's services. Options are validated when the host starts, and every error
    /// is reported at once.
    /// </summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services, Action<PeregrineOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(services);
        ArgumentNullException.ThrowIfNull(configure);
        services.AddOptions<PeregrineOptions>().Configure(configure).ValidateOnStart();
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<PeregrineOptions>, PeregrineOptionsValidator>());
        services.TryAddSingleton<FileCatalog>();

        // Compression follows the catalog's published snapshots; the catalog knows nothing of it.
        services.TryAddSingleton(static sp => Compression.Compressor.Follow(sp.GetRequiredService<FileCatalog>(), sp.GetRequiredService<ILoggerFactory>()));
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        return services;
    }

    /// <summary>
    /// Serves the files of <see cref="PeregrineOptions.Root"/>. Requests that match no file
    /// go on to the next middleware. Indexing starts here, in the background; requests that
    /// arrive before the first index is complete wait for it.
    /// </summary>
    public static IApplicationBuilder UsePeregrine(this IApplicationBuilder app)
    {
        ArgumentNullException.ThrowIfNull(app);
        var catalog = app.ApplicationServices.GetService<FileCatalog>()
            ?? throw new InvalidOperationException("Call services.AddPeregrine(...) before app.UsePeregrine().");
        var loggerFactory = app.ApplicationServices.GetRequiredService<ILoggerFactory>();
        var metrics = app.ApplicationServices.GetRequiredService<Diagnostics.PeregrineMetrics>();

        // Made before the middleware starts the first index, so it follows every snapshot.
        app.ApplicationServices.GetRequiredService<Compression.Compressor>();

        // Constructed directly rather than through UseMiddleware<T>: no reflection, so the
        // library stays trimmable and Native AOT-compatible.
        return app.Use(next => new PeregrineMiddleware(next, catalog, metrics, loggerFactory).Invoke);
    }
}
