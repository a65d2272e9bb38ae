using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Catalog;
using Peregrine.Server.Configuration;
using Peregrine.Server.Hosting;

namespace Peregrine.Tests.Server;

/// <summary>The standalone server, built from a command line as Program does, on a free loopback port.</summary>
public sealed class RunningServer : IAsyncDisposable
{
    private readonly ServerSettings _settings;

    private RunningServer(ServerSettings settings, WebApplication app, Uri address)
    {
        _settings = settings;
        App = app;
        Address = address;
    }

    public WebApplication App { get; }

    public Uri Address { get; }

    internal static ServerSettings Load(params string[] args)
    {
        var loaded = SettingsLoader.Load(args, new Dictionary<string, string>());
        Assert.Empty(loaded.Errors);
        return loaded.Settings!;
    }

    public static async Task<RunningServer> StartAsync(params string[] args)
    {
        var settings = Load([.. args, "--port", "0", "--quiet"]);
        var app = ServerHost.Build(settings);
        await app.StartAsync();
        await app.Services.GetRequiredService<FileCatalog>().Ready;
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new RunningServer(settings, app, new Uri(address));
    }

    /// <summary>A client that trusts any certificate: the tests' certificates are self-signed.</summary>
    public HttpClient CreateClient() => new(new SocketsHttpHandler
    {
        AllowAutoRedirect = false,
        AutomaticDecompression = DecompressionMethods.None,
        SslOptions = { RemoteCertificateValidationCallback = static (_, _, _, _) => true },
    })
    {
        BaseAddress = Address,
    };

    public async ValueTask DisposeAsync()
    {
        await App.StopAsync();
        await App.DisposeAsync();
        _settings.Dispose();
    }
}
