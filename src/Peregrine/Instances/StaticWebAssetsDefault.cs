using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

using Peregrine.StaticWebAssets;

namespace Peregrine.Instances;

/// <summary>
/// For the instance <c>AddPeregrine()</c> adds (the unnamed one): the host's static web assets
/// (<see cref="HostAssets"/>), read once when the options are made, after the web root has
/// become the root (<c>WebRootDefault</c>): the runtime manifest's folders as
/// <see cref="PeregrineOptions.Mounts"/>, the endpoints manifest's routes as the index's aliases.
/// </summary>
internal sealed class StaticWebAssetsDefault(IWebHostEnvironment? environment, IConfiguration? configuration, ILoggerFactory loggerFactory) : IPostConfigureOptions<PeregrineOptions>
{
    public void PostConfigure(string? name, PeregrineOptions options)
    {
        if (name != Options.DefaultName || environment is null || configuration is null || string.IsNullOrEmpty(options.Root))
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
