using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.FileProviders;
using Microsoft.Extensions.Logging;

namespace Peregrine.StaticWebAssets;

/// <summary>
/// What an ASP.NET Core host says about its static web assets, read once at start-up for an
/// instance that serves the host's web root: the folders the runtime manifest adds to the web root, and the routes
/// of the endpoints manifest. Found where ASP.NET Core finds them.
/// </summary>
/// <param name="Mounts">Folders to serve besides the web root (empty without a runtime manifest in use).</param>
/// <param name="Routes">Aliases and stated Cache-Control (empty without an endpoints manifest).</param>
internal sealed record HostAssets(IReadOnlyList<AssetMount> Mounts, AssetRouteTable Routes)
{
    /// <summary>The configuration key that names the runtime manifest (<c>WebHostDefaults.StaticWebAssetsKey</c>).</summary>
    public const string RuntimeManifestKey = "staticWebAssets";

    /// <summary>MapStaticAssets' switch for a build manifest's caching: on, the manifest's Cache-Control is sent as stated.</summary>
    public const string DevelopmentCachingKey = "EnableStaticAssetsDevelopmentCaching";

    /// <summary>MapStaticAssets' switch for its handling of files changed since the build; on by default for a build manifest.</summary>
    public const string ReloadAtRuntimeKey = "ReloadStaticAssetsAtRuntime";

    public static HostAssets None { get; } = new([], AssetRouteTable.Empty);

    /// <summary>
    /// Reads the manifests of the host. The runtime manifest is used when the host put it in
    /// force (<c>WebApplication.CreateBuilder</c> does in Development, or the app called
    /// <c>UseStaticWebAssets()</c>): its folders are what the host's web root serves. The
    /// endpoints manifest is <c>&lt;ApplicationName&gt;.staticwebassets.endpoints.json</c> in
    /// the application's base folder, as <c>MapStaticAssets()</c> finds it.
    /// </summary>
    /// <param name="environment">The host's environment: application name and web root provider.</param>
    /// <param name="configuration">The host's configuration, for the switches MapStaticAssets reads.</param>
    /// <param name="webRoot">The instance's root, which the runtime manifest's own web root pattern duplicates.</param>
    /// <param name="logger">Where what was read is said, once.</param>
    /// <param name="baseDirectory">Where the manifests are looked for; <see cref="AppContext.BaseDirectory"/> unless a test says otherwise.</param>
    public static HostAssets Read(IWebHostEnvironment environment, IConfiguration configuration, string webRoot, ILogger logger, string? baseDirectory = null)
    {
        baseDirectory ??= AppContext.BaseDirectory;
        if (string.IsNullOrEmpty(environment.ApplicationName))
        {
            return None;
        }

        RuntimeManifest? runtime = null;
        var runtimePath = configuration[RuntimeManifestKey] is { Length: > 0 } configured
            ? configured
            : Path.Combine(baseDirectory, environment.ApplicationName + ".staticwebassets.runtime.json");
        if (UsesStaticWebAssets(environment) && File.Exists(runtimePath))
        {
            runtime = RuntimeManifest.Load(runtimePath);
        }

        EndpointsManifest? endpoints = null;
        var endpointsPath = Path.Combine(baseDirectory, environment.ApplicationName + ".staticwebassets.endpoints.json");
        if (File.Exists(endpointsPath))
        {
            endpoints = EndpointsManifest.Load(endpointsPath);
        }

        var mounts = new List<AssetMount>();
        foreach (var mount in runtime?.Mounts ?? [])
        {
            if (mount.UrlPath == "/" && mount.Files is null && SameFolder(mount.Root, webRoot))
            {
                // The app's own wwwroot: the instance's root already.
                continue;
            }

            if (!Directory.Exists(mount.Root))
            {
                StaticWebAssetsLog.ContentRootMissing(logger, mount.Root, mount.UrlPath);
                continue;
            }

            mounts.Add(mount);
        }

        var reload = bool.TryParse(configuration[ReloadAtRuntimeKey], out var explicitReload) ? explicitReload : endpoints?.IsBuild == true;
        var developmentCaching = bool.TryParse(configuration[DevelopmentCachingKey], out var caching) && caching;
        // An encoded file lies where the runtime manifest puts it (a build's copies sit in obj/
        // under generated names), else under the web root (publish writes them beside the file).
        var root = Path.GetFullPath(webRoot);
        string? EncodedFile(string assetPath)
            => runtime?.EncodedFiles.GetValueOrDefault(assetPath) ?? Path.Combine(root, assetPath.TrimStart('/'));

        var routes = AssetRouteTable.Create(endpoints, runtime?.Renames ?? [], manifestCaching: !reload || developmentCaching, EncodedFile);
        StaticWebAssetsLog.Read(logger, mounts.Count, runtime is null ? "none" : runtimePath, routes.Aliases.Count, endpoints is null ? "none" : endpointsPath, reload && !developmentCaching);
        return new HostAssets(mounts, routes);
    }

    /// <summary>
    /// Whether the host's web root includes static web assets: ASP.NET Core composes its manifest
    /// provider (internal to it, so known here by name) with the physical web root.
    /// </summary>
    private static bool UsesStaticWebAssets(IWebHostEnvironment environment)
        => environment.WebRootFileProvider is CompositeFileProvider composite
            && composite.FileProviders.Any(p => p.GetType().Name.Contains("StaticWebAsset", StringComparison.Ordinal));

    /// <summary>Whether two paths name one folder; a relative one is taken from the current directory, as a Root is.</summary>
    internal static bool SameFolder(string a, string b)
        => string.Equals(Path.GetFullPath(a).TrimEnd('/', '\\'), Path.GetFullPath(b).TrimEnd('/', '\\'), OperatingSystem.IsWindows() || OperatingSystem.IsMacOS() ? StringComparison.OrdinalIgnoreCase : StringComparison.Ordinal);
}

internal static partial class StaticWebAssetsLog
{
    [LoggerMessage(70, LogLevel.Information, "Static web assets: {Mounts} folders from {RuntimeManifest}, {Aliases} aliased routes from {EndpointsManifest}; build manifest's caching replaced by no-cache: {NoCache}.")]
    public static partial void Read(ILogger logger, int mounts, string runtimeManifest, int aliases, string endpointsManifest, bool noCache);

    [LoggerMessage(71, LogLevel.Warning, "Not serving {Root} at {UrlPath}: the runtime manifest names it but it does not exist (build the project again).")]
    public static partial void ContentRootMissing(ILogger logger, string root, string urlPath);
}
