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
    /// Adds Peregrine with everything taken from the host, as <c>UseStaticFiles</c> and
    /// <c>MapStaticAssets</c> take it: the web root (<c>IWebHostEnvironment.WebRootPath</c>),
    /// the static web assets manifests of the application (<c>&lt;App&gt;.staticwebassets.runtime.json</c>
    /// when the host uses it, as in Development: the folders of class libraries, packages and
    /// build outputs; <c>&lt;App&gt;.staticwebassets.endpoints.json</c>: fingerprinted routes
    /// and the caching they state), and the environment. Every other overload serves the same
    /// unless its options give a <c>Root</c> (or <c>Bucket</c>) of their own. See docs/library.md.
    /// </summary>
    public static IServiceCollection AddPeregrine(this IServiceCollection services)
    {
        Register(services, Microsoft.Extensions.Options.Options.DefaultName);
        return services;
    }

    /// <summary>
    /// Adds Peregrine as <see cref="AddPeregrine(IServiceCollection)"/> does, then applies
    /// <paramref name="configure"/>: with <c>Root</c> left empty (or naming the web root) the
    /// instance still serves the host's web root and static web assets; a <c>Root</c> of its own
    /// is served alone. Options are validated when the host starts, and every error is reported
    /// at once.
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
    /// An application may add several, to serve several folders under different paths. One
    /// that leaves <c>Root</c> empty serves the host's web root and static web assets, as
    /// <see cref="AddPeregrine(IServiceCollection)"/> does.
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
    /// as the options are named. Served and validated as <see cref="AddPeregrine(IServiceCollection, Action{PeregrineOptions})"/> is:
    /// without a <c>Root</c>, the host's web root and static web assets.
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
        // One rule for every overload (docs/library.md, "Which files an instance serves"): the
        // web root for an empty Root, then the static web assets for an instance whose Root is
        // the web root. Post-configured in this order, after every Configure step.
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<PeregrineOptions>, WebRootDefault>(
            static sp => new WebRootDefault(sp.GetService<Microsoft.AspNetCore.Hosting.IWebHostEnvironment>())));
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<PeregrineOptions>, StaticWebAssetsDefault>(
            static sp => new StaticWebAssetsDefault(
                sp.GetService<Microsoft.AspNetCore.Hosting.IWebHostEnvironment>(),
                sp.GetService<IConfiguration>(),
                // Optional, as the environment is: a bare ServiceCollection (options alone) has no logging.
                sp.GetService<Microsoft.Extensions.Logging.ILoggerFactory>() ?? Microsoft.Extensions.Logging.Abstractions.NullLoggerFactory.Instance)));
        Microsoft.AspNetCore.Builder.PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        return options;
    }

}
