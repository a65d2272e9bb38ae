using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.AspNetCore.Connections;
using Peregrine.Http1;
using Peregrine.Live;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// A real Kestrel on a free loopback port running the Peregrine middleware, followed by a
/// terminal middleware that answers "next" with 404 and a marker header, so tests can tell
/// pass-through from a 404 of Peregrine's own.
/// </summary>
public sealed class PeregrineHost : IAsyncDisposable
{
    public const string NextHeader = "X-Test-Next";

    private readonly WebApplication _app;

    private PeregrineHost(WebApplication app, Uri address)
    {
        _app = app;
        Address = address;
        Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, AutomaticDecompression = DecompressionMethods.None })
        {
            BaseAddress = address,
        };
    }

    public Uri Address { get; }

    public HttpClient Client { get; }

    public IServiceProvider Services => _app.Services;

    /// <param name="reactor">
    /// With <paramref name="fastPath"/>: the standalone server's cleartext listener, whose reactor
    /// reads each connection and answers from the fast path before Kestrel sees it
    /// (Peregrine.Server.Connections.CleartextReactor), rather than Kestrel's socket transport.
    /// </param>
    public static async Task<PeregrineHost> StartAsync(string root, Action<PeregrineOptions>? configure = null, Action<WebApplication>? before = null, bool fastPath = false, Action<KestrelServerOptions>? kestrel = null, Action<ListenOptions>? listen = null, Action<ListenOptions>? behindFastPath = null, bool reactor = false)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        var slot = reactor ? new FastPathSlot() : null;
        if (slot is not null)
        {
            builder.Services.AddSingleton<IConnectionListenerFactory>(services => new ClientHelloTransportFactory(
                services.GetRequiredService<ILoggerFactory>(),
                cleartextPools: services.GetRequiredService<IMemoryPoolFactory<byte>>(),
                fastPath: slot));
        }

        builder.WebHost.ConfigureKestrel(k =>
        {
            kestrel?.Invoke(k);
            k.Listen(IPAddress.Loopback, 0, l =>
            {
                l.Protocols = HttpProtocols.Http1AndHttp2;
                listen?.Invoke(l);
                if (slot is not null)
                {
                    l.UsePeregrineFastPath(slot, sizeTlsOutput: true);
                }
                else if (fastPath)
                {
                    l.UsePeregrineFastPath();
                }

                // Connection middleware here runs only for connections the fast path hands on.
                behindFastPath?.Invoke(l);
            });
        });
        builder.Services.AddPeregrine(options =>
        {
            options.Root = root;
            configure?.Invoke(options);
        });
        var app = builder.Build();
        before?.Invoke(app);
        app.UsePeregrine();
        app.Run(context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.Headers[NextHeader] = "1";
            return Task.CompletedTask;
        });
        await app.StartAsync();
        await app.Services.GetRequiredService<FileCatalog>().Ready;
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new PeregrineHost(app, new Uri(address));
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
