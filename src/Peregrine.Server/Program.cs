using System.Reflection;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.Options;
using Peregrine;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Server.Configuration;
using Peregrine.Server.Hosting;

NativeHeap.LimitArenas();
var loaded = SettingsLoader.Load(args, EnvironmentSource.FromProcess());
foreach (var warning in loaded.Warnings)
{
    Console.Error.WriteLine($"peregrine: warning: {warning}");
}

if (loaded.ShowHelp)
{
    Console.WriteLine(Usage.Text);
    return 0;
}

if (loaded.ShowVersion)
{
    Console.WriteLine($"peregrine {typeof(PeregrineOptions).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "0.0.0"}");
    return 0;
}

if (loaded.Settings is not { } settings)
{
    // Every bad value, one line each, each naming the option and where it was set.
    foreach (var error in loaded.Errors)
    {
        Console.Error.WriteLine($"peregrine: {error}");
    }

    return 2;
}

if (ServerHost.UsesInlineIo(settings) && Environment.GetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS") is null)
{
    // The socket engine's half of inline I/O (see ServerHost): completions run on the epoll
    // thread. Read once, when the first socket is made, so it is set before the host starts.
    Environment.SetEnvironmentVariable("DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS", "1");
}

using (settings)
{
    WebApplication app;
    try
    {
        // Builds the pipeline, which validates the library's options.
        app = ServerHost.Build(settings);
    }
    catch (OptionsValidationException ex)
    {
        return ReportInvalid(ex);
    }

    await using (app)
    {
        try
        {
            await app.StartAsync();
        }
        catch (IOException ex)
        {
            // Address in use, permission denied for a low port: one line, not a stack trace.
            // Kestrel names the address it could not bind; only the redirect port is http://.
            var (option, port) = settings.RedirectHttp is { } redirect && ex.Message.Contains("http://", StringComparison.Ordinal)
                ? (OptionTable.RedirectHttp, redirect)
                : (OptionTable.Port, settings.Port);
            Console.Error.WriteLine($"peregrine: {settings.Describe(option)}: cannot listen on {settings.Host}:{port}: {ex.Message}");
            return 1;
        }
        catch (OptionsValidationException ex)
        {
            return ReportInvalid(ex);
        }

        if (!settings.Quiet)
        {
            // With the access log on standard output, that stream holds log lines only.
            var console = settings.AccessLogToStandardOutput ? Console.Error : Console.Out;
            var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses ?? [];
            foreach (var address in addresses)
            {
                // With TLS, the only cleartext address is the redirect's.
                console.WriteLine(settings.Certificate is not null && address.StartsWith("http://", StringComparison.Ordinal)
                    ? $"Peregrine redirecting {address}/ to HTTPS"
                    : $"Peregrine serving {(settings.ServesBucket ? settings.Root : Path.GetFullPath(settings.Root))} at {address}/");
            }
        }

        // Under systemd (Type=notify) the service counts as started once the first index is
        // complete, as /healthz does; STOPPING=1 as soon as a stop begins.
        var lifetime = app.Services.GetRequiredService<IHostApplicationLifetime>();
        lifetime.ApplicationStopping.Register(static () => SystemdNotify.Send("STOPPING=1"));
        _ = app.Services.GetRequiredService<FileCatalog>().Ready.ContinueWith(
            static ready => SystemdNotify.Send(ready.IsCompletedSuccessfully ? "READY=1" : "STATUS=The first index failed; see the log."),
            TaskScheduler.Default);
        // The runtime has long since expanded the executable's type data; its compressed form
        // need not stay in memory.
        DehydratedData.Release();
        _ = SettledHeap.CollectOnceSettledAsync(
            app.Services.GetRequiredService<FileCatalog>(), app.Services.GetRequiredService<Compressor>(), lifetime.ApplicationStopping);
        using var quietHeap = QuietHeap.Start();

        // Returns once SIGTERM or Ctrl+C has stopped the server: responses in flight have
        // finished, or the shutdown timeout has closed them.
        await app.WaitForShutdownAsync();
    }
}

return 0;

// The library names its own options (Headers, CacheRules); the server's checks have already
// caught most mistakes under the flag's name, so this is for what only the library knows.
static int ReportInvalid(OptionsValidationException ex)
{
    foreach (var failure in ex.Failures)
    {
        Console.Error.WriteLine($"peregrine: {failure}");
    }

    return 2;
}
