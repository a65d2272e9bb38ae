using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// A real Kestrel on a free loopback port with an application the test writes itself: its
/// services, its pipeline, and optionally the fast path. The pipeline's first middleware counts
/// the requests that reach it (<see cref="PipelineRequests"/>), so a test can tell a fast-path
/// answer from one of the pipeline's; a request nothing answers gets 404 with <see cref="NextHeader"/>.
/// </summary>
public sealed class AppHost : IAsyncDisposable
{
    public const string NextHeader = "X-Test-Next";

    private readonly WebApplication _app;
    private int _pipelineRequests;

    private AppHost(WebApplication app)
    {
        _app = app;
    }

    public Uri Address { get; private set; } = null!;

    public HttpClient Client { get; private set; } = null!;

    public IServiceProvider Services => _app.Services;

    /// <summary>Requests that reached the middleware pipeline so far.</summary>
    public int PipelineRequests => Volatile.Read(ref _pipelineRequests);

    public static async Task<AppHost> StartAsync(Action<WebApplicationBuilder> services, Action<WebApplication> pipeline, bool fastPath = false, WebApplicationOptions? options = null)
    {
        var builder = WebApplication.CreateSlimBuilder(options ?? new WebApplicationOptions());
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0, l =>
        {
            l.Protocols = HttpProtocols.Http1AndHttp2;
            if (fastPath)
            {
                l.UsePeregrineFastPath();
            }
        }));
        services(builder);
        var app = builder.Build();
        var host = new AppHost(app);
        app.Use((context, next) =>
        {
            Interlocked.Increment(ref host._pipelineRequests);
            return next(context);
        });
        pipeline(app);
        app.Run(context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            context.Response.Headers[NextHeader] = "1";
            return Task.CompletedTask;
        });
        await app.StartAsync();
        host.Address = new Uri(app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First());
        host.Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, AutomaticDecompression = DecompressionMethods.None }) { BaseAddress = host.Address };
        return host;
    }

    /// <summary>
    /// Routing, then <paramref name="middle"/>'s middleware and endpoints, then the endpoints run:
    /// explicitly, since the host's terminal middleware follows and WebApplication would add
    /// them after it.
    /// </summary>
    public static void Routed(WebApplication app, Action<WebApplication> middle)
    {
        app.UseRouting();
        middle(app);
        app.UseEndpoints(_ => { });
    }

    /// <summary>A GET on a connection of its own, closed after it: one that the fast path may answer.</summary>
    public async Task<HttpResponseMessage> GetOnNewConnectionAsync(string path, params (string Name, string Value)[] headers)
    {
        using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero, AutomaticDecompression = DecompressionMethods.None });
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(Address, path));
        request.Headers.ConnectionClose = true;
        foreach (var (name, value) in headers)
        {
            request.Headers.TryAddWithoutValidation(name, value);
        }

        var response = await client.SendAsync(request);
        await response.Content.LoadIntoBufferAsync();
        return response;
    }

    public async ValueTask DisposeAsync()
    {
        Client?.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
