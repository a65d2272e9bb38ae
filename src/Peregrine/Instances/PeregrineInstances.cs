using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Peregrine.Compression;
using Peregrine.Interop;
using Peregrine.Live;
using Peregrine.Logging;
using Peregrine.Sources;

// Instances: the registration side. An application may add several Peregrines, each with its
// own options (named options), catalog, watcher and compressor (keyed services; the unnamed one
// stays an ordinary singleton). This registry knows which names exist, which catalogs and
// compressors have been made (for the meter's totals) and where each instance is mounted (for
// the fast path, which must know every path another part of the pipeline owns).

namespace Peregrine.Instances;

/// <summary>
/// The Peregrine instances of one application: the names registered with <c>AddPeregrine</c>,
/// the catalogs and compressors made for them, and where each is mounted.
/// </summary>
internal sealed class PeregrineInstances
{
    private readonly HashSet<string> _names = new(StringComparer.Ordinal);
    private readonly Lock _gate = new();
    private readonly List<FileCatalog> _catalogs = [];
    private readonly List<Compressor> _compressors = [];
    private readonly List<Mount> _mounts = [];

    /// <summary>The registry of <paramref name="services"/>, added on first use: it is needed while services are still being registered.</summary>
    public static PeregrineInstances In(IServiceCollection services)
    {
        foreach (var descriptor in services)
        {
            if (descriptor.ServiceType == typeof(PeregrineInstances) && !descriptor.IsKeyedService && descriptor.ImplementationInstance is PeregrineInstances existing)
            {
                return existing;
            }
        }

        var registry = new PeregrineInstances();
        services.AddSingleton(registry);
        return registry;
    }

    /// <summary>Registers one instance's services; <see cref="Options.DefaultName"/> is the unnamed one. Safe to call again for a name.</summary>
    public OptionsBuilder<PeregrineOptions> Register(IServiceCollection services, string name)
    {
        _names.Add(name);
        var options = services.AddOptions<PeregrineOptions>(name);
        options.ValidateOnStart();
        if (name.Length == 0)
        {
            services.TryAddSingleton(sp => ContentSource.For(sp.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(name), sp.GetService<IBucketSourceFactory>(), sp.GetRequiredService<ILoggerFactory>()));
            services.TryAddSingleton(sp => CreateCatalog(sp, name));
            services.TryAddSingleton(sp => CreateCompressor(sp, sp.GetRequiredService<FileCatalog>()));
        }
        else
        {
            services.TryAddKeyedSingleton(name, (sp, _) => ContentSource.For(sp.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(name), sp.GetService<IBucketSourceFactory>(), sp.GetRequiredService<ILoggerFactory>()));
            services.TryAddKeyedSingleton(name, (sp, _) => CreateCatalog(sp, name));
            services.TryAddKeyedSingleton(name, (sp, _) => CreateCompressor(sp, sp.GetRequiredKeyedService<FileCatalog>(name)));
        }

        return options;
    }

    /// <summary>
    /// The catalog and compressor of the instance <paramref name="name"/>, for <paramref name="caller"/>
    /// (<c>app.UsePeregrine()</c>); an instance that was never added is an error that names the fix.
    /// </summary>
    public static (FileCatalog Catalog, Compressor Compressor) Resolve(IServiceProvider services, string name, string caller)
    {
        if (services.GetService<PeregrineInstances>() is not { } registry || !registry.Has(name))
        {
            throw new InvalidOperationException(name.Length == 0
                ? $"Call services.AddPeregrine(...) before {caller}."
                : $"There is no Peregrine instance named '{name}': call services.AddPeregrine(\"{name}\", ...) before {caller}.");
        }

        return name.Length == 0
            ? (services.GetRequiredService<FileCatalog>(), services.GetRequiredService<Compressor>())
            : (services.GetRequiredKeyedService<FileCatalog>(name), services.GetRequiredKeyedService<Compressor>(name));
    }

    /// <summary>Where the instance <paramref name="name"/> (already resolved) takes its files from.</summary>
    public static ContentSource SourceOf(IServiceProvider services, string name)
        => name.Length == 0 ? services.GetRequiredService<ContentSource>() : services.GetRequiredKeyedService<ContentSource>(name);

    /// <summary>Whether an instance of this name was added; empty for the unnamed one.</summary>
    public bool Has(string name) => _names.Contains(name);

    /// <summary>Notes where an instance answers: under a middleware's <c>RequestPath</c>, or an endpoint's literal prefix.</summary>
    public void AddMount(Mount mount)
    {
        lock (_gate)
        {
            _mounts.Add(mount);
        }
    }

    public Mount[] Mounts()
    {
        lock (_gate)
        {
            return [.. _mounts];
        }
    }

    /// <summary>Files in the indexes in force, all instances together.</summary>
    public long FilesIndexed()
    {
        long files = 0;
        foreach (var catalog in Snapshot(_catalogs))
        {
            files += catalog.Current?.FileCount ?? 0;
        }

        return files;
    }

    /// <summary>
    /// What the compressors have done, all instances together, for the compression instruments
    /// (read at collection time). Final once every catalog made has its first index in force
    /// and neither compression pass has work left: every file is at final quality, so nothing
    /// better is coming.
    /// </summary>
    public Metrics.CompressionTotals CompressionTotals()
    {
        var totals = new Metrics.CompressionTotals(0, 0, 0, Final: true);
        foreach (var compressor in Snapshot(_compressors))
        {
            var one = compressor.Totals();
            totals = new(totals.Pending + one.Pending, totals.Upgrading + one.Upgrading, totals.Done + one.Done, totals.Final && one.Final);
        }

        var indexed = Snapshot(_catalogs).All(static c => c.Ready.IsCompletedSuccessfully);
        return totals with { Final = totals.Final && indexed };
    }

    private T[] Snapshot<T>(List<T> list)
    {
        lock (_gate)
        {
            return [.. list];
        }
    }

    private FileCatalog CreateCatalog(IServiceProvider services, string name)
    {
        // The source first: a bucket's sets the root the catalog is to index.
        _ = SourceOf(services, name);
        var loggerFactory = services.GetRequiredService<ILoggerFactory>();
        var catalog = new FileCatalog(services.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(name), loggerFactory);
        bool first;
        lock (_gate)
        {
            first = _catalogs.Count == 0;
            _catalogs.Add(catalog);
        }

        if (first)
        {
            PeregrineLog.Platform(loggerFactory.CreateLogger("Peregrine"), PlatformParts.Mode, PlatformParts.Watching, PlatformParts.Copies, PlatformParts.Leases, Zstd.Description);
        }

        return catalog;
    }

    private Compressor CreateCompressor(IServiceProvider services, FileCatalog catalog)
    {
        // Compression follows the catalog's published snapshots; the catalog knows nothing of it.
        var compressor = Compressor.Follow(catalog, services.GetRequiredService<ILoggerFactory>());
        lock (_gate)
        {
            _compressors.Add(compressor);
        }

        return compressor;
    }
}

/// <summary>Where one instance answers requests.</summary>
/// <param name="Name">The instance; empty for the unnamed one.</param>
/// <param name="Prefix">The path it answers under: a <c>RequestPath</c>, or the literal start of an endpoint's pattern; empty for the site root.</param>
/// <param name="IsEndpoint">Mounted with <c>MapPeregrine</c> (endpoint metadata, such as authorization, applies) rather than <c>UsePeregrine</c>.</param>
/// <param name="InBranch">
/// <c>UsePeregrine</c> called on a branch of the pipeline (<c>app.Map("/static", ...)</c>,
/// <c>MapWhen</c>, <c>UseWhen</c>), which answers only the requests its predicate sends it, under
/// a <c>PathBase</c> the instance never learns.
/// </param>
internal readonly record struct Mount(string Name, string Prefix, bool IsEndpoint, bool InBranch = false);
