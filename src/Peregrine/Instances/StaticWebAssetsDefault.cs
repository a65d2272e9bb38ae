using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

using Peregrine.StaticWebAssets;

namespace Peregrine.Instances;

/// <summary>
/// For every instance that serves the host's web root, whichever <c>AddPeregrine</c> overload
/// added it: the host's static web assets (<see cref="HostAssets"/>), read once when the options
/// are made, after the web root has become the root of an instance that left Root empty
/// (<c>WebRootDefault</c>, registered first): the runtime manifest's folders as
/// <see cref="PeregrineOptions.Mounts"/>, the endpoints manifest's routes as the index's aliases.
/// </summary>
/// <remarks>
/// The rule is the instance's root, not the overload (docs/library.md, "Which files an instance
/// serves"): <c>AddX(configure)</c> is <c>AddX()</c> plus the configure step, so setting
/// RequestPath or a cache rule keeps the assets. A Root of its own (or a Bucket) is served
/// alone: the manifests describe the web root, and their folders and fingerprinted routes laid
/// over another site would serve files that site does not hold.
/// </remarks>
internal sealed class StaticWebAssetsDefault(IWebHostEnvironment? environment, IConfiguration? configuration, ILoggerFactory loggerFactory) : IPostConfigureOptions<PeregrineOptions>
{
    public void PostConfigure(string? name, PeregrineOptions options)
    {
        if (environment?.WebRootPath is not { Length: > 0 } webRoot || configuration is null || options.Bucket is not null
            || string.IsNullOrEmpty(options.Root) || !HostAssets.SameFolder(options.Root, webRoot))
        {
            return;
        }

        var assets = HostAssets.Read(environment, configuration, options.Root, loggerFactory.CreateLogger("Peregrine.StaticWebAssets"));

        // After the mounts the application set itself, which take precedence at equal URL paths.
        foreach (var mount in assets.Mounts)
        {
            options.Mounts.Add(new ContentMount { UrlPath = mount.UrlPath, Root = mount.Root, Files = mount.Files?.ToList() });
        }

        options.Routes = assets.Routes;
    }
}
