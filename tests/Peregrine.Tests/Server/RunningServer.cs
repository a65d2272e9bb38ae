using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
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

    public static Task<RunningServer> StartAsync(params string[] args) => StartAsIsAsync([.. args, "--port", "0", "--quiet"]);

    /// <summary>Starts the server with exactly these arguments and environment: the port is theirs to give.</summary>
    public static Task<RunningServer> StartAsIsAsync(params string[] args) => StartAsIsAsync(new Dictionary<string, string>(), args);

    public static async Task<RunningServer> StartAsIsAsync(IReadOnlyDictionary<string, string> environment, params string[] args)
    {
        var loaded = SettingsLoader.Load(args, environment);
        Assert.Empty(loaded.Errors);
        var settings = loaded.Settings!;
        var app = ServerHost.Build(settings);
        await app.StartAsync();
        await app.Services.GetRequiredService<FileCatalog>().Ready;
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        return new RunningServer(settings, app, new Uri(address));
    }

    /// <summary>Every address the server listens on, as Kestrel reports them.</summary>
    public IReadOnlyList<Uri> Addresses => App.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Select(a => new Uri(a)).ToList();

    /// <summary>A loopback port free a moment ago, for tests of flags that take a fixed port.</summary>
    public static int FreePort()
    {
        using var listener = new System.Net.Sockets.TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
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
