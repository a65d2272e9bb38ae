using System.Buffers;
using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// Ends TLS below Kestrel for the connections whose ClientHello offers only HTTP/1.1: does the
/// handshake on the socket, as Kestrel's <c>HttpsConnectionMiddleware</c> would, and hands Kestrel
/// a <see cref="TerminatedConnection"/>, whose TLS features make the middleware pass it on.
/// Kestrel's own layers under an HTTPS connection (its socket transport's pipes, the stream over
/// them, the middleware's pipes over the TLS stream) cost more CPU a request than nginx spends
/// serving the file; with TLS ended here, HTTPS/1.1 at 3.5 KB runs at nginx's speed
/// (docs/performance.md, "HTTPS/1.1: TLS ended below Kestrel"). HTTP/2 and ClientHellos not read
/// keep Kestrel's TLS.
/// </summary>
/// <remarks>
/// Kept equal to the middleware: the same <see cref="SslServerAuthenticationOptions"/>
/// (<see cref="HttpsCertificate"/>'s, the certificate in force as the handshake starts), its
/// handshake timeout, its Debug logs under its category (event ids 1 to 3), and its metrics on
/// Kestrel's meter (<c>kestrel.tls_handshake.duration</c>, <c>kestrel.active_tls_handshakes</c>,
/// with the same tags), and the protocol's version among the connection's metric tags
/// (<see cref="TerminatedConnection.TagMetrics"/>). Kestrel's connection metrics and connection
/// logs start when it is handed the connection, after the handshake; a handshake that fails never
/// reaches them.
/// </remarks>
internal sealed partial class TlsTerminator
{
    /// <summary>Kestrel's default (<c>TlsHandshakeCallbackOptions.HandshakeTimeout</c>).</summary>
    public static readonly TimeSpan DefaultHandshakeTimeout = TimeSpan.FromSeconds(10);

    private readonly HttpsCertificate _certificate;
    private readonly TimeSpan _handshakeTimeout;
    private readonly ILogger _logger;
    private readonly Histogram<double>? _duration;
    private readonly UpDownCounter<long>? _active;

    /// <param name="meters">For Kestrel's meter, on which the handshake's metrics are recorded as Kestrel records its own; null for none.</param>
    public TlsTerminator(HttpsCertificate certificate, ILoggerFactory loggers, IMeterFactory? meters, TimeSpan? handshakeTimeout = null)
    {
        _certificate = certificate;
        _handshakeTimeout = handshakeTimeout ?? DefaultHandshakeTimeout;
        _logger = loggers.CreateLogger("Microsoft.AspNetCore.Server.Kestrel.Https.Internal.HttpsConnectionMiddleware");
        if (meters is not null)
        {
            // The factory hands out one meter a name, so these record on Kestrel's own.
            var meter = meters.Create("Microsoft.AspNetCore.Server.Kestrel");
            _duration = meter.CreateHistogram<double>("kestrel.tls_handshake.duration", unit: "s", description: "The duration of TLS handshakes on the server.");
            _active = meter.CreateUpDownCounter<long>("kestrel.active_tls_handshakes", description: "Number of TLS handshakes that are currently in progress on the server.");
        }
    }

    /// <summary>
    /// Does the TLS handshake on <paramref name="socket"/>; the connection for Kestrel, or null
    /// (the socket closed) when it failed, timed out, or the server is stopping.
    /// </summary>
    public async Task<ConnectionContext?> HandshakeAsync(Socket socket, MemoryPool<byte> pool, CancellationToken stopping)
    {
        var stream = new SocketStream(socket);
        var tls = new SslStream(stream, leaveInnerStreamOpen: false);
        var countsActive = _active is { Enabled: true };
        var tags = countsActive || _duration is { Enabled: true } ? Tags(socket.LocalEndPoint) : default;
        if (countsActive)
        {
            _active!.Add(1, tags);
        }

        var started = Stopwatch.GetTimestamp();
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(stopping);
            timeout.CancelAfter(_handshakeTimeout);
            await tls.AuthenticateAsServerAsync(_certificate.Options, timeout.Token);
        }
        catch (Exception ex)
        {
            // Kestrel's middleware catches OperationCanceledException, IOException and
            // AuthenticationException; anything else ends the connection here too, closed,
            // rather than leaving its socket open.
            Stopped(countsActive, tags, started, protocol: null, ex);
            if (ex is OperationCanceledException && !stopping.IsCancellationRequested)
            {
                AuthenticationTimedOut(_logger);
            }
            else
            {
                AuthenticationFailed(_logger, ex);
            }

            await tls.DisposeAsync();
            return null;
        }

        Stopped(countsActive, tags, started, tls.SslProtocol, exception: null);
        var connection = new TerminatedConnection(stream, tls, pool);
        HttpsConnectionEstablished(_logger, connection.ConnectionId, tls.SslProtocol);
        return connection;
    }

    private void Stopped(bool countsActive, TagList tags, long started, SslProtocols? protocol, Exception? exception)
    {
        if (countsActive)
        {
            _active!.Add(-1, tags);
        }

        if (_duration is not { Enabled: true })
        {
            return;
        }

        if (protocol is { } version && Version(version) is { } name)
        {
            tags.Add("tls.protocol.version", name);
        }

        if (exception is not null)
        {
            tags.Add("exception.type", exception.GetType().FullName);
        }

        _duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, tags);
    }

    // As KestrelMetrics names them; TLS is the default protocol name and is not recorded.
    internal static string? Version(SslProtocols protocol) => protocol switch
    {
        SslProtocols.Tls12 => "1.2",
        SslProtocols.Tls13 => "1.3",
        _ => null,
    };

    // KestrelMetrics.InitializeConnectionTags, for a TCP socket.
    private static TagList Tags(EndPoint? local)
    {
        var tags = new TagList();
        if (local is IPEndPoint ip)
        {
            tags.Add("server.address", ip.Address.ToString());
            tags.Add("server.port", ip.Port);
            tags.Add("network.type", ip.AddressFamily == AddressFamily.InterNetworkV6 ? "ipv6" : "ipv4");
            tags.Add("network.transport", "tcp");
        }

        return tags;
    }

    // HttpsConnectionMiddleware's messages and event ids (HttpsConnectionMiddlewareLoggerExtensions).
    [LoggerMessage(1, LogLevel.Debug, "Failed to authenticate HTTPS connection.", EventName = "AuthenticationFailed")]
    private static partial void AuthenticationFailed(ILogger logger, Exception exception);

    [LoggerMessage(2, LogLevel.Debug, "Authentication of the HTTPS connection timed out.", EventName = "AuthenticationTimedOut")]
    private static partial void AuthenticationTimedOut(ILogger logger);

    [LoggerMessage(3, LogLevel.Debug, "Connection \"{ConnectionId}\" established using the following protocol: {Protocol}", EventName = "HttpsConnectionEstablished")]
    private static partial void HttpsConnectionEstablished(ILogger logger, string connectionId, SslProtocols protocol);
}
