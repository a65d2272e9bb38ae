using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine.Http1;
using Peregrine.Live;
using Peregrine.Metrics;

// In the namespace of Kestrel's own ListenOptions extensions (UseHttps), which an application
// that configures Kestrel already imports.
namespace Microsoft.AspNetCore.Hosting;

/// <summary>Peregrine's HTTP/1.1 fast path for a Kestrel endpoint.</summary>
public static class PeregrineFastPathExtensions
{
    /// <summary>
    /// Serves plain HTTP/1.1 GET and HEAD requests for files held in memory directly from the
    /// connection, skipping Kestrel's HTTP layer and the middleware pipeline, with the same
    /// responses the middleware gives. Any other request goes to Kestrel and the pipeline as
    /// usual: a GET or HEAD with no body alone, the connection coming back to the fast path after
    /// it; any other with the rest of its connection. Use it only where <c>UsePeregrine()</c> is the first
    /// middleware to answer file paths (as in the standalone server). It serves the unnamed
    /// instance only, when <c>UsePeregrine()</c> mounts it at the site root and it has no
    /// <c>OnPrepareResponse</c>; paths under other instances' mounts and <c>MapPeregrine</c>
    /// patterns are always handed on (see docs/library.md, "The fast path and ASP.NET Core"). On an HTTPS endpoint call
    /// it after <c>UseHttps</c>: connections that negotiate HTTP/1.1 are served the same way, and
    /// every TLS connection's output, HTTP/2 included, is written to the TLS stream in 32 KiB
    /// pieces rather than Kestrel's 4 KiB ones. Cleartext HTTP/2 is passed through untouched.
    /// </summary>
    /// <param name="listen">The endpoint.</param>
    /// <param name="reservedPaths">Paths other middleware answers before Peregrine (such as
    /// <c>/healthz</c>); requests for them always take the pipeline.</param>
    public static ListenOptions UsePeregrineFastPath(this ListenOptions listen, params string[] reservedPaths)
        => Use(listen, reservedPaths, frontOnly: false, sizeTlsOutput: true);

    /// <summary>
    /// The fast path, as <see cref="UsePeregrineFastPath(ListenOptions, string[])"/> adds it, with
    /// TLS output sizing on or off: with <paramref name="sizeTlsOutput"/> false, HTTP/1.1 over TLS
    /// is still answered here, and every TLS connection's output is left to Kestrel's 4 KiB
    /// writes (for comparison, or where a TLS stack prefers small records).
    /// </summary>
    /// <param name="listen">The endpoint.</param>
    /// <param name="sizeTlsOutput">Whether TLS output is written in 32 KiB pieces. Default (in the other overload): true.</param>
    /// <param name="reservedPaths">Paths other middleware answers before Peregrine; requests for them always take the pipeline.</param>
    public static ListenOptions UsePeregrineFastPath(this ListenOptions listen, bool sizeTlsOutput, params string[] reservedPaths)
        => Use(listen, reservedPaths, frontOnly: false, sizeTlsOutput);

    /// <summary>
    /// The fast path's look at each connection's first head for what Kestrel's parser would get
    /// wrong (<see cref="KestrelFront"/>), and nothing else: for a server that runs without the
    /// fast path, so that both answer alike.
    /// </summary>
    internal static ListenOptions UsePeregrineKestrelFront(this ListenOptions listen)
        => Use(listen, [], frontOnly: true, sizeTlsOutput: false);

    /// <summary>
    /// The fast path, as <see cref="UsePeregrineFastPath(ListenOptions, bool, string[])"/> adds
    /// it, also given to <paramref name="slot"/> for a listener that answers from it before
    /// Kestrel (the standalone server's cleartext reactor).
    /// </summary>
    internal static ListenOptions UsePeregrineFastPath(this ListenOptions listen, FastPathSlot slot, bool sizeTlsOutput, params string[] reservedPaths)
        => Use(listen, reservedPaths, frontOnly: false, sizeTlsOutput, slot);

    private static ListenOptions Use(ListenOptions listen, string[] reservedPaths, bool frontOnly, bool sizeTlsOutput, FastPathSlot? slot = null)
    {
        ArgumentNullException.ThrowIfNull(listen);
        Http1FastPath? fastPath = null;
        var made = false;
        var gate = new Lock();

        // Made on first use (the first connection, or the reactor's first), once the pipeline
        // (and so every mount) is built, which is before Kestrel binds.
        Http1FastPath? Get()
        {
            if (!Volatile.Read(ref made))
            {
                lock (gate)
                {
                    if (!made)
                    {
                        fastPath = Create(listen.ApplicationServices, reservedPaths, frontOnly, sizeTlsOutput);
                        Volatile.Write(ref made, true);
                    }
                }
            }

            return fastPath;
        }

        slot?.Bind(Get);
        listen.Use(next => connection => Get() is { } fastPath ? fastPath.OnConnectionAsync(connection, next) : next(connection));
        return listen;
    }

    /// <summary>The fast path of the unnamed instance; null when the application has named instances only, whose requests all go to the pipeline.</summary>
    private static Http1FastPath? Create(IServiceProvider services, string[] reservedPaths, bool frontOnly, bool sizeTlsOutput)
    {
        var instances = services.GetService<Peregrine.Instances.PeregrineInstances>()
            ?? throw new InvalidOperationException("Call services.AddPeregrine(...) before using the Peregrine fast path.");
        if (!instances.Has(""))
        {
            return null;
        }

        var catalog = services.GetRequiredService<FileCatalog>();
        var kestrel = services.GetRequiredService<IOptions<KestrelServerOptions>>().Value;
        Peregrine.Instances.PeregrineInstances.SourceOf(services, "").Start(catalog);
        return new Http1FastPath(
            catalog,
            services.GetRequiredService<PeregrineMetrics>(),
            reservedPaths,
            kestrel.Limits,
            kestrel.AddServerHeader,
            FastPathScope.Of(instances, catalog.Options),
            frontOnly,
            sizeTlsOutput);
    }
}
