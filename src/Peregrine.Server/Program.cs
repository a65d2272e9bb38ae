using System.Reflection;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine;
using Peregrine.Server;

var commandLine = CommandLine.TryParse(args, out var error);
if (commandLine is null)
{
    Console.Error.WriteLine($"peregrine: {error}");
    return 2;
}

if (commandLine.ShowHelp)
{
    Console.WriteLine(CommandLine.Usage);
    return 0;
}

if (commandLine.ShowVersion)
{
    Console.WriteLine($"peregrine {typeof(PeregrineOptions).Assembly.GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion ?? "0.0.0"}");
    return 0;
}

WebApplication app;
try
{
    app = ServerHost.Build(commandLine, args: []);
    await app.StartAsync();
}
catch (IOException ex)
{
    // Address in use, permission denied for a low port: one line, not a stack trace.
    Console.Error.WriteLine($"peregrine: --port/--host: cannot listen on {commandLine.Host}:{commandLine.Port}: {ex.Message}");
    return 1;
}
catch (Microsoft.Extensions.Options.OptionsValidationException ex)
{
    Console.Error.WriteLine($"peregrine: {string.Join(" ", ex.Failures)}");
    return 2;
}

if (!commandLine.Quiet)
{
    var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()?.Addresses ?? [];
    foreach (var address in addresses)
    {
        Console.WriteLine($"Peregrine serving {Path.GetFullPath(commandLine.Root)} at {address}/");
    }
}

await app.WaitForShutdownAsync();
return 0;
