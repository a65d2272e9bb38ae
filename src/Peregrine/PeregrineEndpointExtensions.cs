using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Routing;
using Microsoft.AspNetCore.Routing.Patterns;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Instances;
using Peregrine.Serving;

// Beside UsePeregrine, in ASP.NET Core's namespace for Map* methods, as MapStaticAssets is.
namespace Microsoft.AspNetCore.Builder;

/// <summary>Peregrine as a routing endpoint.</summary>
public static class PeregrineEndpointExtensions
{
    /// <summary>
    /// Serves the unnamed instance's files as an endpoint under <paramref name="pattern"/>, which
    /// ends in a catch-all parameter naming the file (<c>/files/{**path}</c>). Being an endpoint,
    /// it takes endpoint metadata: <c>RequireAuthorization()</c>, <c>RequireCors(...)</c>,
    /// <c>RequireRateLimiting(...)</c> and the like apply to its files. A request that matches
    /// the pattern but no file gets 404. The instance's <c>RequestPath</c> must be left empty:
    /// the pattern says where the files are.
    /// </summary>
    public static IEndpointConventionBuilder MapPeregrine(this IEndpointRouteBuilder endpoints, string pattern)
        => Map(endpoints, pattern, "", "endpoints.MapPeregrine(...)");

    /// <summary>Serves the named instance added with <c>AddPeregrine(name, ...)</c> as an endpoint, as <see cref="MapPeregrine(IEndpointRouteBuilder, string)"/> does.</summary>
    public static IEndpointConventionBuilder MapPeregrine(this IEndpointRouteBuilder endpoints, string pattern, string name)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return Map(endpoints, pattern, name, $"endpoints.MapPeregrine(..., \"{name}\")");
    }

    private static IEndpointConventionBuilder Map(IEndpointRouteBuilder endpoints, string pattern, string name, string caller)
    {
        ArgumentNullException.ThrowIfNull(endpoints);
        ArgumentException.ThrowIfNullOrEmpty(pattern);
        var route = RoutePatternFactory.Parse(pattern);
        var last = route.PathSegments.Count == 0 ? null : route.PathSegments[^1];
        if (last is not { IsSimple: true } || last.Parts[0] is not RoutePatternParameterPart { IsCatchAll: true } file)
        {
            throw new ArgumentException($"The pattern '{pattern}' must end in a catch-all parameter that names the file, as in '/files/{{**path}}'.", nameof(pattern));
        }

        var services = endpoints.ServiceProvider;
        var middleware = PeregrineMiddleware.Create(services, name, caller, out var options);
        if (!string.IsNullOrEmpty(options.RequestPath.Value))
        {
            throw new InvalidOperationException($"RequestPath: '{options.RequestPath}' cannot be used with {caller}: the route pattern '{pattern}' says where the files are. Leave RequestPath empty.");
        }

        services.GetRequiredService<PeregrineInstances>().AddMount(new Mount(name, LiteralPrefix(route), IsEndpoint: true));
        var serve = middleware(static context =>
        {
            // Matched the pattern, named no file: the endpoint is the end of the pipeline.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        });
        var parameter = file.Name;
        return endpoints.Map(route, context => ServeUnderPrefix(context, serve, parameter))
            .WithDisplayName(name.Length == 0 ? $"Peregrine {pattern}" : $"Peregrine '{name}' {pattern}");
    }

    /// <summary>
    /// Serves the file the catch-all value names, with what the pattern matched before it moved
    /// from <c>Path</c> to <c>PathBase</c> for the call (as <c>UsePathBase</c> does), so that the
    /// middleware finds the file and its redirects and listing links keep the prefix.
    /// </summary>
    private static async Task ServeUnderPrefix(HttpContext context, RequestDelegate serve, string parameter)
    {
        var request = context.Request;
        var path = request.Path.Value ?? "";
        var file = request.RouteValues[parameter] as string ?? "";
        if (!path.EndsWith(file, StringComparison.Ordinal))
        {
            // Route values come from the decoded path, so this does not happen; never guess.
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return;
        }

        // "/files/a/b.txt" with "a/b.txt": prefix "/files", path "/a/b.txt". "/files" alone keeps
        // an empty path, which the middleware redirects to "/files/".
        var prefix = path[..^file.Length];
        if (prefix.EndsWith('/'))
        {
            prefix = prefix[..^1];
        }

        var originalBase = request.PathBase;
        var originalPath = request.Path;
        request.PathBase = originalBase.Add(new PathString(prefix));
        request.Path = new PathString(path[prefix.Length..]);
        try
        {
            await serve(context);
        }
        finally
        {
            request.PathBase = originalBase;
            request.Path = originalPath;
        }
    }

    /// <summary>The pattern's leading literal segments (<c>/files</c> for <c>/files/{**path}</c>): every request the endpoint can match lies under it.</summary>
    private static string LiteralPrefix(RoutePattern route)
    {
        var prefix = "";
        foreach (var segment in route.PathSegments)
        {
            if (!segment.IsSimple || segment.Parts[0] is not RoutePatternLiteralPart literal)
            {
                break;
            }

            prefix += "/" + literal.Content;
        }

        return prefix;
    }
}
