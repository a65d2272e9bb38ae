using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Peregrine.Tests.Metrics;

/// <summary>
/// A real Kestrel on a free loopback port with the pipeline the standalone server builds:
/// health at /healthz, metrics at /metrics, then Peregrine, then a terminal 404 that marks
/// pass-through with <see cref="NextHeader"/>.
/// </summary>
internal sealed class DiagnosticsHost : IAsyncDisposable
{
    public const string NextHeader = "X-Test-Next";

    private readonly WebApplication _app;

    private DiagnosticsHost(WebApplication app, Uri address)
    {
        _app = app;
        Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, AutomaticDecompression = DecompressionMethods.None })
        {
            BaseAddress = address,
        };
    }

    public HttpClient Client { get; }

    public IServiceProvider Services => _app.Services;

    /// <param name="root">The folder to serve.</param>
    /// <param name="serveFiles">
    /// Whether to add UsePeregrine. Without it nothing starts the index, which is how a test
    /// holds the catalog in its "starting" state.
    /// </param>
    /// <param name="services">More services, added after Peregrine's.</param>
    public static async Task<DiagnosticsHost> StartAsync(string root, bool serveFiles = true, Action<IServiceCollection>? services = null)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddPeregrine(options => options.Root = root);

        // What AddPeregrine is to do itself; registrations are TryAdd, so calling both is harmless.
        PeregrineDiagnosticsExtensions.AddPeregrineDiagnostics(builder.Services);
        services?.Invoke(builder.Services);

        var app = builder.Build();
        app.UsePeregrineHealth("/healthz");
        app.UsePeregrineMetrics("/metrics");
        if (serveFiles)
        {
            app.UsePeregrine();
        }

        app.Run(context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.Headers[NextHeader] = "1";
            return Task.CompletedTask;
        });
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new DiagnosticsHost(app, new Uri(address));
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
