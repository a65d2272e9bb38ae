// Bytes allocated per request over TLS, next to the same requests in the clear: Kestrel in this
// process, h2load as the client in another (so that only the server's allocations are counted),
// GC.GetTotalAllocatedBytes(precise: true) around runs of N/5 and N requests, each on a
// connection of its own; (bytes of the long run - bytes of the short run) / (N - N/5) is the
// figure per request, from which the connection's own set-up (TCP, the TLS handshake, HTTP/2
// settings, the connection's buffers) cancels out. That set-up is reported on its own.
//
// Kestrel's memory pool (4 KiB pinned blocks for the pipes) returns idle blocks to the GC since
// ASP.NET Core 10 and allocates them again when load comes back, in bursts that fall on one run
// and not the next. Those bytes are counted apart, from the pool's own metric
// (aspnetcore.memory_pool.allocated, meter Microsoft.AspNetCore.MemoryPool), and left out of the
// per-request figures.
//
// Each server listens three ways: cleartext HTTP/1.1, cleartext HTTP/2 (an Http2-only endpoint,
// which takes prior knowledge), and HTTPS (Http1AndHttp2 with UseHttps, as the standalone server
// with --tls-cert: HTTP/1.1 or h2 by ALPN). Four servers: Peregrine wired as the standalone server
// wires the library (the HTTP/1.1 fast path on the cleartext HTTP/1.1 endpoint and after UseHttps,
// the middleware behind it) on Kestrel's own socket transport; the standalone server itself
// (ServerHost, two instances: cleartext, where HTTP/1.1 and h2c share one port and the listener
// sorts connections by their first bytes, and HTTPS, where it sorts them by their ClientHello and
// ends an HTTP/1.1-only connection's TLS itself, below Kestrel, through TlsTerminator); Peregrine's
// middleware alone; and a "ceiling" that writes the same bytes with Content-Type and
// Content-Length and nothing else. The ceiling's
// TLS figure minus its cleartext one is what Kestrel's TLS layer (SslStream, the HTTPS connection
// middleware and its pipes) allocates per request; Peregrine's TLS figure minus the ceiling's is
// what Peregrine adds over TLS.
//
//   dotnet run -c Release --project bench/Alloc -- tls [REQUESTS] [ROUNDS] [STREAMS] [SIZES]
//
// REQUESTS per cell (default 50,000; a warm-up run of a fifth of it first, on its own
// connection); ROUNDS, measurements per cell, alternating servers, the median printed with
// the range (default 3): Kestrel's memory pool returns idle blocks and allocates them again
// later, in bursts that fall on one run and not the next; STREAMS, concurrent HTTP/2 streams
// on the connection (h2load -m, default 1); SIZES, the bodies' sizes in bytes, comma-separated
// (default 3348,31744; over HTTPS/1.1 the fast path hands a body of about 64 KiB or more to the
// TLS stream from its own array, so 133120 or 427008 measure that path).
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Peregrine.Live;
using Peregrine.Server.Configuration;
using Peregrine.Server.Hosting;

static class TlsAlloc
{
    private static (string Name, int Size)[] Files = [("small.bin", 3348), ("medium.bin", 31744)];

    private static readonly (string Name, Protocol Protocol)[] Protocols =
    [
        ("HTTP/1.1", Protocol.Http1),
        ("HTTPS/1.1", Protocol.Https1),
        ("h2c", Protocol.H2c),
        ("h2 over TLS", Protocol.H2),
    ];

    private enum Protocol
    {
        Http1,
        Https1,
        H2c,
        H2,
    }

    public static async Task RunAsync(string[] args)
    {
        var requests = args.Length > 1 ? int.Parse(args[1]) : 50_000;
        var rounds = args.Length > 2 ? int.Parse(args[2]) : 3;
        var streams = args.Length > 3 ? int.Parse(args[3]) : 1;
        if (args.Length > 4)
        {
            Files = [.. args[4].Split(',').Select(size => int.TryParse(size, out var bytes) && bytes > 0
                ? ($"f-{bytes}.bin", bytes)
                : throw new ArgumentException($"SIZES: '{size}' is not a whole number of bytes above 0"))];
        }
        var root = Directory.CreateTempSubdirectory("peregrine-alloc-tls").FullName;
        try
        {
            var bodies = new Dictionary<string, byte[]>();
            foreach (var (name, size) in Files)
            {
                var body = new byte[size];
                new Random(size).NextBytes(body);
                File.WriteAllBytes(Path.Combine(root, name), body);
                bodies["/" + name] = body;
            }

            using var certificate = SelfSigned();
            using var pools = ListenToMemoryPools();
            var rows = new List<string>();
            var setup = new List<string>();
            await using (var fastPath = await StartAsync(root, bodies, certificate, Kind.FastPath))
            await using (var standalone = await StartStandaloneAsync(root, certificate))
            await using (var peregrine = await StartAsync(root, bodies, certificate, Kind.Middleware))
            await using (var ceiling = await StartAsync(root, bodies, certificate, Kind.Ceiling))
            {
                foreach (var (file, size) in Files)
                {
                    var figures = new Dictionary<(Kind Kind, Protocol Protocol), double>();
                    foreach (var (name, protocol) in Protocols)
                    {
                        var samples = new List<(Figures F, Figures S, Figures P, Figures C)>();
                        for (var round = 0; round < rounds; round++)
                        {
                            // Alternating servers, so that a drift over time falls on all alike.
                            var f = await MeasureAsync(fastPath, protocol, "/" + file, requests, streams);
                            var s = await MeasureAsync(standalone, protocol, "/" + file, requests, streams);
                            var p = await MeasureAsync(peregrine, protocol, "/" + file, requests, streams);
                            var c = await MeasureAsync(ceiling, protocol, "/" + file, requests, streams);
                            samples.Add((f, s, p, c));
                        }

                        figures[(Kind.FastPath, protocol)] = Median(samples.Select(x => x.F.PerRequest));
                        figures[(Kind.Standalone, protocol)] = Median(samples.Select(x => x.S.PerRequest));
                        figures[(Kind.Middleware, protocol)] = Median(samples.Select(x => x.P.PerRequest));
                        figures[(Kind.Ceiling, protocol)] = Median(samples.Select(x => x.C.PerRequest));
                        rows.Add($"| GET {size:N0} B | {name} | {Range(samples.Select(x => x.F.PerRequest))} | {Range(samples.Select(x => x.S.PerRequest))} | {Range(samples.Select(x => x.P.PerRequest))} | {Range(samples.Select(x => x.C.PerRequest))} "
                            + $"| {figures[(Kind.Middleware, protocol)] - figures[(Kind.Ceiling, protocol)]:F1} "
                            + $"| {Median(samples.Select(x => x.F.PoolPerRequest)):F1} / {Median(samples.Select(x => x.S.PoolPerRequest)):F1} / {Median(samples.Select(x => x.P.PoolPerRequest)):F1} / {Median(samples.Select(x => x.C.PoolPerRequest)):F1} |");
                        setup.Add($"| GET {size:N0} B | {name} | {Median(samples.Select(x => x.F.PerConnection)) / 1024:F1} | {Median(samples.Select(x => x.S.PerConnection)) / 1024:F1} "
                            + $"| {Median(samples.Select(x => x.P.PerConnection)) / 1024:F1} | {Median(samples.Select(x => x.C.PerConnection)) / 1024:F1} |");
                    }

                    // What TLS adds per request, from the medians.
                    foreach (var (clear, tls, name) in new[] { (Protocol.Http1, Protocol.Https1, "HTTPS/1.1"), (Protocol.H2c, Protocol.H2, "h2 over TLS") })
                    {
                        double Added(Kind kind) => figures[(kind, tls)] - figures[(kind, clear)];
                        rows.Add($"| GET {size:N0} B | {name} minus cleartext | {Added(Kind.FastPath):F1} | {Added(Kind.Standalone):F1} | {Added(Kind.Middleware):F1} | {Added(Kind.Ceiling):F1} "
                            + $"| {Added(Kind.Middleware) - Added(Kind.Ceiling):F1} | |");
                    }
                }
            }

            Console.WriteLine($"Median of {rounds} rounds (range):");
            Console.WriteLine();
            Console.WriteLine("| request | protocol | Peregrine, fast path B/request | standalone server B/request | Peregrine middleware B/request | ceiling B/request | middleware above ceiling | memory-pool blocks B/request, fast path / standalone / middleware / ceiling (not in the figures) |");
            Console.WriteLine("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
            rows.ForEach(Console.WriteLine);
            Console.WriteLine();
            Console.WriteLine("Per connection (set-up and buffers, not in the figures above), KiB, medians:");
            Console.WriteLine();
            Console.WriteLine("| request | protocol | Peregrine, fast path | standalone server | Peregrine middleware | ceiling |");
            Console.WriteLine("| --- | --- | ---: | ---: | ---: | ---: |");
            setup.ForEach(Console.WriteLine);
            Console.WriteLine();
            Console.WriteLine($"h2load (-c1 -m{streams}, another process): {requests:N0} requests on one connection less {Math.Max(1000, requests / 5):N0} on another, per cell; "
                + $"server allocations only; .NET {Environment.Version}; {Environment.ProcessorCount} cores; "
                + $"certificate ECDSA P-256 self-signed; {Negotiated}.");
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
    }

    private static string Negotiated { get; set; } = "TLS not checked";

    private static long poolAllocated;

    private readonly record struct Figures(double PerRequest, double PoolPerRequest, double PerConnection);

    /// <summary>Adds up the bytes Kestrel's memory pools allocate (their blocks, from the GC).</summary>
    private static MeterListener ListenToMemoryPools()
    {
        var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "Microsoft.AspNetCore.MemoryPool" && instrument.Name == "aspnetcore.memory_pool.allocated")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref poolAllocated, value));
        listener.SetMeasurementEventCallback<int>((_, value, _, _) => Interlocked.Add(ref poolAllocated, value));
        listener.Start();
        return listener;
    }

    private static double Median(IEnumerable<double> values)
    {
        var sorted = values.Order().ToArray();
        return sorted.Length % 2 == 1 ? sorted[sorted.Length / 2] : (sorted[sorted.Length / 2 - 1] + sorted[sorted.Length / 2]) / 2;
    }

    private static string Range(IEnumerable<double> values)
    {
        var all = values.ToArray();
        return all.Length == 1 ? $"{all[0]:F1}" : $"{Median(all):F1} ({all.Min():F1} to {all.Max():F1})";
    }

    private static X509Certificate2 SelfSigned()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=127.0.0.1", key, HashAlgorithmName.SHA256);
        var san = new SubjectAlternativeNameBuilder();
        san.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(san.Build());
        using var ephemeral = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(2));

        // Through PKCS#12, as a certificate loaded from files is: a persisted key, not an ephemeral one.
        return X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), null);
    }

    /// <summary>Bytes per request (without memory-pool blocks), pool bytes per request, bytes per connection.</summary>
    private static async Task<Figures> MeasureAsync(Server server, Protocol protocol, string path, int requests, int streams)
    {
        var (port, scheme, h1) = protocol switch
        {
            Protocol.Http1 => (server.Http1Port, "http", true),
            Protocol.Https1 => (server.TlsPort, "https", true),
            Protocol.H2c => (server.H2cPort, "http", false),
            _ => (server.TlsPort, "https", false),
        };
        var url = $"{scheme}://127.0.0.1:{port}{path}";

        var shortRun = Math.Max(1000, requests / 5);
        if (requests <= shortRun)
        {
            throw new ArgumentException($"REQUESTS must be above {shortRun}");
        }

        // Warm up: tiered compilation, pools; a connection of its own.
        await H2LoadAsync(url, shortRun, h1 ? 1 : streams, h1, expectTls: scheme == "https");

        async Task<(long All, long Pool)> AllocatedAsync(int n)
        {
            GC.Collect();
            var pool = Interlocked.Read(ref poolAllocated);
            var before = GC.GetTotalAllocatedBytes(precise: true);
            await H2LoadAsync(url, n, h1 ? 1 : streams, h1, expectTls: scheme == "https");
            var all = GC.GetTotalAllocatedBytes(precise: true) - before;
            return (all, Interlocked.Read(ref poolAllocated) - pool);
        }

        var small = await AllocatedAsync(shortRun);
        var large = await AllocatedAsync(requests);
        var n = (double)(requests - shortRun);
        var perRequest = (large.All - large.Pool - (small.All - small.Pool)) / n;
        var poolPerRequest = (large.Pool - small.Pool) / n;
        return new Figures(perRequest, poolPerRequest, small.All - small.Pool - perRequest * shortRun);
    }

    // h2load -n N -c1: exactly N requests on one connection; fails unless every request succeeded
    // and the protocol asked for was negotiated (h2 by ALPN over TLS, http/1.1 with --h1).
    private static async Task H2LoadAsync(string url, int requests, int streams, bool h1, bool expectTls)
    {
        var start = new ProcessStartInfo("h2load")
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
        };
        foreach (var a in new[] { "-n", requests.ToString(), "-c", "1", "-m", streams.ToString() })
        {
            start.ArgumentList.Add(a);
        }

        if (h1)
        {
            start.ArgumentList.Add("--h1");
        }

        start.ArgumentList.Add(url);
        using var process = Process.Start(start) ?? throw new InvalidOperationException("cannot start h2load (Debian: nghttp2-client)");
        var stderr = process.StandardError.ReadToEndAsync();
        var output = await process.StandardOutput.ReadToEndAsync();
        await process.WaitForExitAsync();
        await stderr;

        var want = h1 ? "http/1.1" : expectTls ? "h2" : "h2c";
        var lines = output.Split('\n');
        var protocol = lines.FirstOrDefault(l => l.StartsWith("Application protocol:", StringComparison.Ordinal))?.Split(':')[1].Trim();
        var summary = lines.FirstOrDefault(l => l.StartsWith("requests:", StringComparison.Ordinal)) ?? "";
        if (protocol != want || !summary.Contains($"{requests} succeeded, 0 failed, 0 errored, 0 timeout", StringComparison.Ordinal))
        {
            throw new InvalidOperationException($"h2load {url}: protocol {protocol ?? "none"} (want {want}), '{summary}'\n{output}");
        }

        if (expectTls)
        {
            var tls = lines.FirstOrDefault(l => l.StartsWith("TLS Protocol:", StringComparison.Ordinal))?.Split(':')[1].Trim();
            var cipher = lines.FirstOrDefault(l => l.StartsWith("Cipher:", StringComparison.Ordinal))?.Split(':')[1].Trim();
            Negotiated = $"{tls} {cipher}";
        }
    }

    private enum Kind
    {
        FastPath,
        Standalone,
        Middleware,
        Ceiling,
    }

    private static async Task<Server> StartAsync(string root, Dictionary<string, byte[]> bodies, X509Certificate2 certificate, Kind kind)
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        ListenOptions? http1 = null, h2c = null, tls = null;
        builder.WebHost.ConfigureKestrel(k =>
        {
            k.AddServerHeader = false;
            k.Listen(IPAddress.Loopback, 0, listen =>
            {
                (http1 = listen).Protocols = HttpProtocols.Http1;
                if (kind == Kind.FastPath)
                {
                    listen.UsePeregrineFastPath();
                }
            });
            k.Listen(IPAddress.Loopback, 0, listen => (h2c = listen).Protocols = HttpProtocols.Http2);
            k.Listen(IPAddress.Loopback, 0, listen =>
            {
                // As the standalone server does with --tls-cert.
                (tls = listen).Protocols = HttpProtocols.Http1AndHttp2;
                listen.UseHttps(certificate);
                if (kind == Kind.FastPath)
                {
                    // As the standalone server: after UseHttps, so that HTTP/1.1 over TLS takes it.
                    listen.UsePeregrineFastPath();
                }
            });
        });
        builder.Services.AddPeregrine(o => o.Root = root);
        var app = builder.Build();
        if (kind == Kind.Ceiling)
        {
            app.Use(_ => context => CeilingResponse.Write(context, bodies[context.Request.Path.Value!], "application/octet-stream"));
        }
        else
        {
            app.UsePeregrine();
        }

        await app.StartAsync();
        if (kind != Kind.Ceiling)
        {
            await app.Services.GetRequiredService<FileCatalog>().Ready;
        }

        // Kestrel writes the bound port (asked as 0) back into each ListenOptions.
        return new Server([app], [], http1!.IPEndPoint!.Port, h2c!.IPEndPoint!.Port, tls!.IPEndPoint!.Port);
    }

    /// <summary>
    /// The standalone server as its command line builds it (ServerHost), twice: cleartext, where
    /// HTTP/1.1 and prior-knowledge h2c share the port, and HTTPS with the same certificate from
    /// PEM files. Its socket engine setting (DOTNET_SYSTEM_NET_SOCKETS_INLINE_COMPLETIONS=1,
    /// which the executable sets for itself) is read once per process: set it in the
    /// environment to measure with it, and every server here runs with it.
    /// </summary>
    private static async Task<Server> StartStandaloneAsync(string root, X509Certificate2 certificate)
    {
        var files = Directory.CreateTempSubdirectory("peregrine-alloc-cert").FullName;
        var cert = Path.Combine(files, "cert.pem");
        var key = Path.Combine(files, "key.pem");
        File.WriteAllText(cert, certificate.ExportCertificatePem());
        File.WriteAllText(key, certificate.GetECDsaPrivateKey()!.ExportPkcs8PrivateKeyPem());

        var cleartext = await StartServerHostAsync([root, "--host", "127.0.0.1", "--port", "0", "--quiet"]);
        var https = await StartServerHostAsync([root, "--host", "127.0.0.1", "--port", "0", "--quiet", "--tls-cert", cert, "--tls-key", key]);
        return new Server([cleartext.App, https.App], [cleartext.Settings, https.Settings, new DeletedOnDispose(files)], cleartext.Port, cleartext.Port, https.Port);
    }

    private static async Task<(WebApplication App, ServerSettings Settings, int Port)> StartServerHostAsync(string[] args)
    {
        var loaded = SettingsLoader.Load(args, new Dictionary<string, string>());
        var settings = loaded.Settings ?? throw new InvalidOperationException(string.Join("; ", loaded.Errors));
        var app = ServerHost.Build(settings);
        await app.StartAsync();
        await app.Services.GetRequiredService<FileCatalog>().Ready;
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        return (app, settings, new Uri(address).Port);
    }

    private sealed class DeletedOnDispose(string directory) : IDisposable
    {
        public void Dispose() => Directory.Delete(directory, recursive: true);
    }

    private sealed record Server(IReadOnlyList<WebApplication> Apps, IReadOnlyList<IDisposable> Owned, int Http1Port, int H2cPort, int TlsPort) : IAsyncDisposable
    {
        public async ValueTask DisposeAsync()
        {
            foreach (var app in Apps)
            {
                await app.StopAsync();
                await app.DisposeAsync();
            }

            foreach (var owned in Owned)
            {
                owned.Dispose();
            }
        }
    }
}
