using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.Logging.Console;
using Peregrine;
using Peregrine.Http1;
using Peregrine.Server.AccessLog;
using Peregrine.Server.Auth;
using Peregrine.Server.Configuration;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;
using Peregrine.Syntax;

namespace Peregrine.Server.Hosting;

/// <summary>Builds the standalone server: an empty host with Kestrel's core, Peregrine, and 404 for the rest.</summary>
internal static class ServerHost
{
    public static readonly PathString HealthPath = "/healthz";

    public static readonly PathString MetricsPath = "/metrics";

    public static WebApplication Build(ServerSettings settings)
    {
        // The empty builder, not the slim one: the server's settings are all read by
        // SettingsLoader, so the slim builder's configuration (appsettings.json files watched
        // for changes beside the executable, every environment variable, the "Kestrel" and
        // "Logging" sections, host filtering and forwarded-headers filters, routing) was work
        // done before the first response for nothing the server reads (docs/performance.md,
        // "Start-up"). Kestrel, logging and everything else the server uses are added below.
        var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions
        {
            Args = [],
            ContentRootPath = AppContext.BaseDirectory,
        });
        builder.WebHost.UseKestrelCore();

        ConfigureLogging(builder.Logging, settings);
        var https = settings.Certificate is { } certificate ? new HttpsCertificate(certificate) : null;

        // On SIGTERM or Ctrl+C Kestrel stops accepting, lets responses in flight finish for up
        // to this long, then closes what is left.
        builder.Services.Configure<HostOptions>(host => host.ShutdownTimeout = settings.ShutdownTimeout);

        // The fast path of the main endpoint, for the cleartext reactor to answer from.
        var fastPath = new FastPathSlot();
        if (UsesInlineIo(settings) && https is null)
        {
            // Measured on this project's 2-core machine with the server pinned to one core
            // (docs/performance.md, "Inline I/O"): running Kestrel's continuations on the
            // socket threads instead of hopping to the thread pool saves a context switch per
            // read and write, and lifts HTTP/1.1 markedly. It is "unsafe" only for code that
            // blocks; Peregrine's request path does not (disk reads are scheduled off the socket
            // thread by RandomAccess).
            builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);

            // Except for HTTP/2: prior-knowledge h2c answers about twice the requests/s at 3.5 KB
            // with Kestrel's default scheduling, where the frames of many streams gather into one send. The
            // listener peeks at each connection's first bytes and gives one that starts with the
            // connection preface the default; the rest stay inline, with Kestrel's own memory
            // pool (docs/performance.md, "Inline I/O"). Endpoints other than IP addresses keep
            // Kestrel's transport, inline.
            if (ClientHelloTransportFactory.IsSupported)
            {
                // With the fast path on Linux, the listener reads and answers connections itself
                // before Kestrel (Connections/CleartextReactor).
                builder.Services.AddSingleton<IConnectionListenerFactory>(services => new ClientHelloTransportFactory(
                    services.GetRequiredService<ILoggerFactory>(),
                    cleartextPools: services.GetRequiredService<IMemoryPoolFactory<byte>>(),
                    fastPath: fastPath));
            }
        }
        else if (UsesInlineIo(settings) && ClientHelloTransportFactory.IsSupported)
        {
            // Over TLS the same holds for HTTP/1.1, while HTTP/2 is faster with Kestrel's default
            // scheduling: the choice is made per connection, from the protocols its ClientHello
            // offers (docs/performance.md, "Inline I/O").
            // Plain HTTP to the HTTPS port gets 400 there; the redirect port's is its business.
            int? httpsPort = settings.RedirectHttp == settings.Port ? null : settings.Port;
            // Connections whose ClientHello offers only HTTP/1.1 have their TLS ended by the
            // listener, below Kestrel, with the handshake options and timeout Kestrel's own TLS uses
            // for the others (Connections/Tls/TlsTerminator); --kestrel-tls leaves them to Kestrel as well.
            var handshakeTimeout = https!.CreateHandshakeOptions().HandshakeTimeout;
            builder.Services.AddSingleton<IConnectionListenerFactory>(services => new ClientHelloTransportFactory(
                services.GetRequiredService<ILoggerFactory>(),
                httpsPort,
                terminator: settings.KestrelTls ? null : new TlsTerminator(https, services.GetRequiredService<ILoggerFactory>(), services.GetService<System.Diagnostics.Metrics.IMeterFactory>(), handshakeTimeout)));
        }

        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            // The Server header tells attackers the stack and costs bytes on every response.
            kestrel.AddServerHeader = false;

            // Cleartext HTTP/2 arrives by prior knowledge, with ":scheme: http" on a connection
            // that Http2PriorKnowledge marks as negotiated; the scheme is not used for anything.
            kestrel.AllowAlternateSchemes = true;

            // RFC 9112 §3.2.2: an origin server given an absolute-form target MUST ignore Host
            // and use the target's authority. Kestrel refuses a differing Host with a 400 unless
            // told to put the authority in its place.
            kestrel.AllowHostHeaderOverride = true;
            var firstBytesTimeout = kestrel.Limits.RequestHeadersTimeout;
            void Configure(ListenOptions listen)
            {
                listen.Protocols = HttpProtocols.Http1AndHttp2;
                if (https is not null)
                {
                    // TLS offers h2 and http/1.1 by ALPN, with the certificate in force when each
                    // handshake starts. The prior-knowledge detector must not run here: it would
                    // read TLS handshake bytes as a cleartext preface.
                    https.UseOn(listen);
                }
                else
                {
                    listen.UseHttp2PriorKnowledge(firstBytesTimeout);
                }

                // Plain HTTP/1.1 GETs for files in memory are answered below Kestrel's HTTP
                // layer, over TLS after the handshake. The access log must see every request, and
                // Basic authentication must check every request, so each turns this off; the
                // health and metrics paths always take the pipeline.
                if (!settings.NoFastPath && settings.AccessLog is null && settings.Authenticator is null)
                {
                    listen.UsePeregrineFastPath(fastPath, sizeTlsOutput: !settings.NoTlsSizing, HealthPath, MetricsPath);
                }
                else
                {
                    // Without it, its look at each connection's first head for the valid
                    // requests Kestrel's parser refuses still runs (KestrelFront).
                    listen.UsePeregrineKestrelFront();
                }
            }

            Listen(kestrel, settings, settings.Port, Configure);
            if (settings.RedirectHttp is { } redirectPort)
            {
                // Browsers reach an http:// URL over HTTP/1.1; the answer is a redirect only.
                Listen(kestrel, settings, redirectPort, static listen => listen.Protocols = HttpProtocols.Http1);
            }
        });

        if (https is not null)
        {
            builder.Services.AddHostedService(services => new CertificateReloader(settings, https, services.GetRequiredService<ILogger<CertificateReloader>>()));
        }

        if (settings.RedirectHttp is not null)
        {
            // ASP.NET Core's own middleware: 308 keeps the method and body (RFC 9110 §15.4.9);
            // the Location has the request's host, the HTTPS port, and its path and query.
            // With --port 0 the port is found from the address Kestrel bound.
            builder.Services.AddHttpsRedirection(redirect =>
            {
                redirect.RedirectStatusCode = StatusCodes.Status308PermanentRedirect;
                redirect.HttpsPort = settings.Port == 0 ? null : settings.Port;
            });
        }

        builder.Services.AddPeregrine(settings.ApplyTo);
        builder.Services.AddPeregrineBuckets();
        if (settings.AccessLogStream is { } accessLog)
        {
            // A singleton so that the container disposes it after the server stops, which
            // writes out the last lines.
            builder.Services.AddSingleton(services => new AccessLogWriter(
                accessLog,
                services.GetRequiredService<ILoggerFactory>().CreateLogger("Peregrine.Server.AccessLog")));
        }

        var app = builder.Build();

        // Start-up's information lines are written once Kestrel listens; a failed start drops them.
        if (ReportedStartupFailure.In(app.Services) is { } console)
        {
            app.Lifetime.ApplicationStarted.Register(console.Started);
        }

        if (app.Services.GetService<AccessLogWriter>() is { } writer)
        {
            // First, so that every request is logged, health and metrics included.
            app.Use(next => new AccessLogMiddleware(next, writer).Invoke);
        }

        // Before anything answers: what Kestrel let through and RFC 9110/9112 refuse.
        app.Use(static next => context => RequestChecks.Refusal(context) is var refusal and not 0 ? RequestChecks.Refuse(context, refusal) : next(context));

        if (settings.RedirectHttp is not null)
        {
            // Every cleartext request is on the redirect port; HTTPS requests pass through.
            app.UseHttpsRedirection();
        }

        app.UsePeregrineHealth(HealthPath);
        if (settings.BucketNotify is { } notifyPath)
        {
            // Ahead of Basic authentication: the bucket's notifier has no password to give. An
            // event only asks for a sync; what is served always comes from the bucket.
            app.UsePeregrineBucketEvents(notifyPath);
        }

        if (settings.Authenticator is { } authenticator)
        {
            app.Use(next => new BasicAuthMiddleware(next, authenticator).Invoke);
        }

        if (settings.Metrics)
        {
            app.UsePeregrineMetrics(MetricsPath);
        }

        app.UsePeregrine();
        app.Run(static context =>
        {
            context.Response.StatusCode = StatusCodes.Status404NotFound;
            return Task.CompletedTask;
        });
        return app;
    }

    /// <summary>
    /// Inline I/O is on unless <c>--no-inline-io</c> turns it off. On a TLS server it applies to
    /// the connections that do not offer HTTP/2 (see <see cref="ClientHelloTransportFactory"/>);
    /// the socket engine's half (completions on the epoll thread) is process-wide.
    /// </summary>
    public static bool UsesInlineIo(ServerSettings settings) => !settings.NoInlineIo;

    private static void Listen(KestrelServerOptions kestrel, ServerSettings settings, int port, Action<ListenOptions> configure)
    {
        if (settings.Address is { } address)
        {
            kestrel.Listen(address, port, configure);
        }
        else
        {
            kestrel.ListenLocalhost(port, configure);
        }
    }

    private static void ConfigureLogging(ILoggingBuilder logging, ServerSettings settings)
    {
        logging.SetMinimumLevel(settings.Quiet ? LogLevel.Error : settings.Verbose ? LogLevel.Debug : LogLevel.Information);
        logging.AddFilter("Microsoft", settings.Quiet ? LogLevel.Error : settings.Verbose ? LogLevel.Information : LogLevel.Warning);

        // A line per request is the access log's job, and would miss the fast path's requests.
        // Off entirely unless --verbose: while this category is on at any level, ASP.NET Core's
        // hosting starts an Activity for every request Kestrel answers (its test is
        // IsEnabled(Critical)), and that Activity, and the execution context it flows through
        // every await, cost each HTTP/2 request about a sixth of its time (docs/performance.md,
        // "No Activity per request"). Start-up
        // failures are reported by the server itself and by the host's own category.
        logging.AddFilter("Microsoft.AspNetCore.Hosting.Diagnostics", settings.Verbose ? LogLevel.Warning : LogLevel.None);

        // Kestrel warns at start-up that cleartext HTTP/2 needs ALPN; Http2PriorKnowledge
        // provides it, so that warning would mislead.
        logging.AddFilter("Microsoft.AspNetCore.Server.Kestrel", LogLevel.Error);

        // One line per message ("info: Peregrine[1] Indexed 12 files ..."). Problems go to
        // standard error; with the access log on standard output, everything does, so that
        // standard output holds access log lines only.
        logging.AddSimpleConsole(console => console.SingleLine = true);
        ReportedStartupFailure.Install(logging);

        // The console prints no scopes; capturing them costs every connection Kestrel's
        // connection scope, kept for its whole life (docs/performance.md, "Memory per idle connection").
        logging.Services.Configure<LoggerFilterOptions>(filters => filters.CaptureScopes = false);
        logging.Services.Configure<ConsoleLoggerOptions>(console =>
            console.LogToStandardErrorThreshold = settings.AccessLogToStandardOutput ? LogLevel.Trace : LogLevel.Warning);
    }
}
