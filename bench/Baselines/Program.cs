using System.Net;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine.Bench.Baselines;

// Usage: baselines MODE ROOT --port N [--h2-port N] [--size N] [--tls-cert FILE --tls-key FILE]
//   MODE     stock | seed | ceiling
//   ROOT     directory to serve (ignored by ceiling)
//   --port   HTTP/1.1 (and HTTP/2 over TLS, unused here) on 127.0.0.1
//   --h2-port optional second listener speaking HTTP/2 only. Kestrel selects HTTP/2 on a
//            cleartext Http1AndHttp2 endpoint only through ALPN, so prior-knowledge h2c
//            needs an Http2-only endpoint (dotnet/aspnetcore#56984).
//   --size   ceiling only: the byte count of the constant body
//   --tls-cert, --tls-key  PEM certificate and key: --port then serves HTTPS only (HTTP/1.1
//            and HTTP/2 by ALPN), as Peregrine's standalone server does with the same flags
if (args.Length < 2)
{
    Console.Error.WriteLine("usage: baselines stock|seed|ceiling ROOT --port N [--h2-port N] [--size N] [--tls-cert FILE --tls-key FILE]");
    return 2;
}

string mode = args[0];
string root = Path.GetFullPath(args[1]);
int port = IntOption(args, "--port") ?? 5000;
int? h2Port = IntOption(args, "--h2-port");
int size = IntOption(args, "--size") ?? 0;
string? tlsCert = StringOption(args, "--tls-cert");
string? tlsKey = StringOption(args, "--tls-key");
X509Certificate2? certificate = tlsCert is null ? null : X509Certificate2.CreateFromPemFile(tlsCert, tlsKey);

var builder = WebApplication.CreateSlimBuilder();
// Hosting logs every request at Information level; a tuned deployment does not.
builder.Logging.SetMinimumLevel(LogLevel.Warning);
builder.WebHost.ConfigureKestrel(kestrel =>
{
    kestrel.Listen(IPAddress.Loopback, port, listen =>
    {
        listen.Protocols = HttpProtocols.Http1AndHttp2;
        if (certificate is not null)
        {
            listen.UseHttps(certificate);
        }
    });
    if (h2Port is int p)
    {
        kestrel.Listen(IPAddress.Loopback, p, listen => listen.Protocols = HttpProtocols.Http2);
    }
});

var app = builder.Build();
switch (mode)
{
    case "stock":
        app.UseStaticFiles(StockStaticFiles.Options(root));
        break;
    case "seed":
        app.Use(SeedMiddleware.Create(root));
        break;
    case "ceiling":
        app.Use(CeilingMiddleware.Create(size));
        break;
    default:
        Console.Error.WriteLine($"unknown mode '{mode}'");
        return 2;
}

await app.StartAsync();
Console.WriteLine($"{mode} listening on {(certificate is null ? "http" : "https")}://127.0.0.1:{port}/" + (h2Port is int h ? $" (h2c on {h})" : ""));
await app.WaitForShutdownAsync();
return 0;

static int? IntOption(string[] args, string name)
    => StringOption(args, name) is string value ? int.Parse(value, System.Globalization.CultureInfo.InvariantCulture) : null;

static string? StringOption(string[] args, string name)
{
    int i = Array.IndexOf(args, name);
    return i >= 0 && i + 1 < args.Length ? args[i + 1] : null;
}
