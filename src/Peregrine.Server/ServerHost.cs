using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine;

namespace Peregrine.Server;

/// <summary>Builds the standalone server: a slim host, Kestrel, Peregrine, and 404 for the rest.</summary>
internal static class ServerHost
{
    public static WebApplication Build(CommandLine commandLine, string[] args)
    {
        // The slim builder leaves out what a file server does not use (routing's full
        // configuration, HTTPS defaults, IIS integration) and needs no reflection.
        var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions
        {
            Args = args,
            ContentRootPath = AppContext.BaseDirectory,
        });

        builder.Logging.SetMinimumLevel(commandLine.Quiet ? LogLevel.Error : LogLevel.Information);
        builder.Logging.AddFilter("Microsoft", commandLine.Quiet ? LogLevel.Error : LogLevel.Warning);

        // Kestrel warns at start-up that cleartext HTTP/2 needs ALPN; Http2PriorKnowledge
        // provides it, so that warning would mislead.
        builder.Logging.AddFilter("Microsoft.AspNetCore.Server.Kestrel", LogLevel.Error);

        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            // The Server header tells attackers the stack and costs bytes on every response.
            kestrel.AddServerHeader = false;

            // Cleartext HTTP/2 arrives by prior knowledge, with ":scheme: http" on a connection
            // that Http2PriorKnowledge marks as negotiated; the scheme is not used for anything.
            kestrel.AllowAlternateSchemes = true;
            var firstBytesTimeout = kestrel.Limits.RequestHeadersTimeout;
            void Configure(ListenOptions listen)
            {
                listen.Protocols = HttpProtocols.Http1AndHttp2;
                listen.UseHttp2PriorKnowledge(firstBytesTimeout);
            }
            if (commandLine.Address is { } address)
            {
                kestrel.Listen(address, commandLine.Port, Configure);
            }
            else
            {
                kestrel.ListenLocalhost(commandLine.Port, Configure);
            }
        });

        builder.Services.AddPeregrine(options => options.Root = commandLine.Root);

        var app = builder.Build();
        app.UsePeregrine();
        app.Run(static context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        });
        return app;
    }
}
