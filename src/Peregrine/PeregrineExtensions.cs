using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine;
using Peregrine.Instances;
using Peregrine.Serving;

// In ASP.NET Core's namespace for Use* methods, as UseStaticFiles is: an application finds
// UsePeregrine without a using line of its own (docs/library.md, "Namespaces").
namespace Microsoft.AspNetCore.Builder;

/// <summary>Peregrine in an ASP.NET Core application's pipeline.</summary>
public static class PeregrineExtensions
{
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

    private static IApplicationBuilder UseInstance(IApplicationBuilder app, string name)
    {
        ArgumentNullException.ThrowIfNull(app);
        var middleware = PeregrineMiddleware.Create(app.ApplicationServices, name, name.Length == 0 ? "app.UsePeregrine()" : $"app.UsePeregrine(\"{name}\")", out var options);
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
}
