using System.Net;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Peregrine.Instances;
using Peregrine.Sources.Bucket;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// A real Kestrel on loopback serving a bucket through the library, with /healthz and the
/// notification endpoint, started without waiting for the first copy (a test of an unreachable
/// bucket needs the host up before it).
/// </summary>
public sealed class BucketHost : IAsyncDisposable
{
    public const string EventsPath = "/_peregrine/bucket-events";

    private readonly WebApplication _app;

    private BucketHost(WebApplication app, Uri address)
    {
        _app = app;
        Client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, AutomaticDecompression = DecompressionMethods.None }) { BaseAddress = address };
    }

    public HttpClient Client { get; }

    public IServiceProvider Services => _app.Services;

    internal BucketSource Source => (BucketSource)PeregrineInstances.SourceOf(_app.Services, "").Copied!;

    public static async Task<BucketHost> StartAsync(Uri endpoint, string uri, Action<BucketOptions>? configure = null, Action<PeregrineOptions>? options = null)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddPeregrine(o =>
        {
            o.Bucket = new BucketOptions { Uri = uri, ServiceUrl = endpoint.ToString(), ForcePathStyle = true, PollInterval = TimeSpan.FromMilliseconds(300) };
            configure?.Invoke(o.Bucket);
            options?.Invoke(o);
        });
        builder.Services.AddPeregrineBuckets();
        var app = builder.Build();
        app.UsePeregrineHealth("/healthz");
        app.UsePeregrineBucketEvents(EventsPath);
        app.UsePeregrine();
        app.Run(static context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        });
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new BucketHost(app, new Uri(address));
    }

    public async Task<string> TextAsync(string path)
    {
        using var response = await Client.GetAsync(path);
        return response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadAsStringAsync() : $"<{(int)response.StatusCode}>";
    }

    /// <summary>The "bucket" object of /healthz, and the status it came with.</summary>
    public async Task<(HttpStatusCode Status, JsonElement Bucket)> HealthAsync()
    {
        using var response = await Client.GetAsync("/healthz");
        using var document = JsonDocument.Parse(await response.Content.ReadAsStringAsync());
        return (response.StatusCode, document.RootElement.GetProperty("bucket").Clone());
    }

    /// <summary>Polls <paramref name="condition"/> until it holds, within <paramref name="bound"/> of the run's own time.</summary>
    public static async Task EventuallyAsync(Func<Task<bool>> condition, TimeSpan bound, string what)
    {
        using var guard = new HangGuard(bound);
        while (!await condition())
        {
            if (guard.Token.IsCancellationRequested)
            {
                throw new TimeoutException($"Not within {bound.TotalSeconds} s: {what}");
            }

            await Task.Delay(100);
        }
    }

    public async ValueTask DisposeAsync()
    {
        Client.Dispose();
        await _app.StopAsync();
        await _app.DisposeAsync();
    }
}
