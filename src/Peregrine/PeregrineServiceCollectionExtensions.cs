using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Options;
using Peregrine;
using Peregrine.Instances;
using Peregrine.Validation;

// In ASP.NET Core's namespace for Add* methods, as AddDirectoryBrowser is: an application finds
// AddPeregrine without a using line of its own (docs/library.md, "Namespaces").
namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registration of Peregrine's services in an ASP.NET Core application.</summary>
public static class PeregrineServiceCollectionExtensions
{
    /// <summary>
    /// Adds Peregrine's services. Options are validated when the host starts, and every error
    /// is reported at once.
    /// </summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services, Action<PeregrineOptions> configure)
    {
        ArgumentNullException.ThrowIfNull(configure);
        Register(services, Microsoft.Extensions.Options.Options.DefaultName).Configure(configure);
        return services;
    }

    /// <summary>
    /// Adds a named Peregrine instance, with its own options, catalog, watcher and compression,
    /// served by <c>app.UsePeregrine(name)</c> or <c>endpoints.MapPeregrine(pattern, name)</c>.
    /// An application may add several, to serve several folders under different paths.
    /// </summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services, string name, Action<PeregrineOptions> configure)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(configure);
        Register(services, name).Configure(configure);
        return services;
    }

    /// <summary>
    /// Adds Peregrine's services with options bound from <paramref name="configuration"/> (a
    /// section such as <c>builder.Configuration.GetSection("Peregrine")</c>): <c>Root</c>,
    /// <c>RequestPath</c>, <c>CacheControl</c>, <c>Headers</c>, <c>Compression:Enabled</c> and so on,
    /// as the options are named. Validated as <see cref="AddPeregrine(IServiceCollection, Action{PeregrineOptions})"/> is.
    /// </summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services, IConfiguration configuration)
    {
        ArgumentNullException.ThrowIfNull(configuration);
        Register(services, Microsoft.Extensions.Options.Options.DefaultName).Configure(options => OptionsBinding.Bind(configuration, options));
        return services;
    }

    /// <summary>A named instance (see <see cref="AddPeregrine(IServiceCollection, string, Action{PeregrineOptions})"/>) with options bound from <paramref name="configuration"/>.</summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services, string name, IConfiguration configuration)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        ArgumentNullException.ThrowIfNull(configuration);
        Register(services, name).Configure(options => OptionsBinding.Bind(configuration, options));
        return services;
    }

    private static OptionsBuilder<PeregrineOptions> Register(IServiceCollection services, string name)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = PeregrineInstances.In(services).Register(services, name);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<PeregrineOptions>, PeregrineOptionsValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<PeregrineOptions>, WebRootDefault>(
            static sp => new WebRootDefault(sp.GetService<Microsoft.AspNetCore.Hosting.IWebHostEnvironment>())));
        Microsoft.AspNetCore.Builder.PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        return options;
    }

}
