using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Peregrine.Instances;

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
        ArgumentNullException.ThrowIfNull(configure);
        Register(services, Options.DefaultName).Configure(configure);
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
        Register(services, Options.DefaultName).Configure(options => OptionsBinding.Bind(configuration, options));
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

    /// <summary>
    /// Serves the files of <see cref="PeregrineOptions.Root"/>. Requests that match no file
    /// go on to the next middleware. Indexing starts here, in the background; requests that
    /// arrive before the first index is complete wait for it.
    /// </summary>
    public static IApplicationBuilder UsePeregrine(this IApplicationBuilder app) => UseInstance(app, Options.DefaultName);

    /// <summary>Serves the files of the named instance added with <c>AddPeregrine(name, ...)</c>, as <see cref="UsePeregrine(IApplicationBuilder)"/> does.</summary>
    public static IApplicationBuilder UsePeregrine(this IApplicationBuilder app, string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return UseInstance(app, name);
    }

    private static OptionsBuilder<PeregrineOptions> Register(IServiceCollection services, string name)
    {
        ArgumentNullException.ThrowIfNull(services);
        var options = PeregrineInstances.In(services).Register(services, name);
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IValidateOptions<PeregrineOptions>, PeregrineOptionsValidator>());
        services.TryAddEnumerable(ServiceDescriptor.Singleton<IPostConfigureOptions<PeregrineOptions>, WebRootDefault>(
            static sp => new WebRootDefault(sp.GetService<Microsoft.AspNetCore.Hosting.IWebHostEnvironment>())));
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(services);
        return options;
    }

    private static IApplicationBuilder UseInstance(IApplicationBuilder app, string name)
    {
        ArgumentNullException.ThrowIfNull(app);
        var middleware = CreateMiddleware(app.ApplicationServices, name, name.Length == 0 ? "app.UsePeregrine()" : $"app.UsePeregrine(\"{name}\")", out var options);
        app.ApplicationServices.GetRequiredService<PeregrineInstances>().AddMount(new Mount(name, options.RequestPath.Value ?? "", IsEndpoint: false, IsBranch(app)));
        return app.Use(middleware);
    }

    /// <summary>
    /// Whether <paramref name="app"/> is a branch of the pipeline rather than its root. ASP.NET
    /// Core's <c>ApplicationBuilder</c> keeps a root's properties in a <c>Dictionary</c>, and a
    /// branch's (made by <c>New()</c>, as <c>Map</c>, <c>MapWhen</c> and <c>UseWhen</c> do) in a
    /// copy-on-write view of its parent's; nothing public says which. Any other builder counts as
    /// a branch, so that at worst the fast path hands on what it could have answered.
    /// </summary>
    private static bool IsBranch(IApplicationBuilder app) => app.Properties is not Dictionary<string, object?>;

    /// <summary>
    /// The middleware of one instance, with its compressor made first so that it follows every
    /// snapshot; indexing starts when the middleware is made.
    /// </summary>
    internal static Func<RequestDelegate, RequestDelegate> CreateMiddleware(IServiceProvider services, string name, string caller, out PeregrineOptions options)
    {
        var (catalog, _) = PeregrineInstances.Resolve(services, name, caller);
        var loggerFactory = services.GetRequiredService<ILoggerFactory>();
        var metrics = services.GetRequiredService<Diagnostics.PeregrineMetrics>();
        options = catalog.Options;

        // Constructed directly rather than through UseMiddleware<T>: no reflection, so the
        // library stays trimmable and Native AOT-compatible.
        var source = PeregrineInstances.SourceOf(services, name);
        return next => new PeregrineMiddleware(next, catalog, source, metrics, loggerFactory).Invoke;
    }
}
