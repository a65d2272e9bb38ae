using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Interop;
using Peregrine.Live;
using Peregrine.Metrics;

namespace Peregrine.Http1;

/// <summary>
/// Answers plain HTTP/1.1 and HTTP/1.0 GETs and HEADs for files held in memory straight from the
/// connection, below Kestrel's HTTP layer: the request head is parsed in place, the response is a
/// header block encoded when the file was first served, the Date line and the bytes; one byte
/// range of such a file is answered too (206). Everything else (a path not in memory, several
/// ranges, a body, a percent-encoded path, an unknown precondition, HTTP/1.0 without Host,
/// HTTP/2, a malformed head) is Kestrel's, through the normal pipeline: a
/// body-less GET or HEAD read whole is lent to it (<see cref="KestrelLease"/>) and the connection
/// is read on here once Kestrel has answered; any other request is handed to Kestrel before a
/// single byte of it is consumed, with the rest of the connection. The responses are the middleware's: both write one <see cref="ResponseFields"/>.
/// Over TLS (after Kestrel's handshake, when ALPN chose HTTP/1.1, HTTP/1.0 or nothing) it works
/// the same, writing through the connection's <see cref="TlsOutput"/> unless that is switched off.
/// </summary>
internal sealed partial class Http1FastPath
{
    // Pipelined requests are answered into the connection's pipe until this many bytes wait
    // there, then flushed before the next is answered: a client that pipelines thousands of
    // requests for a 1 MB file gets them as fast as it reads, and the server holds at most one
    // batch, not every response at once. A body is written whole: in pieces with a flush after
    // each, large bodies were slower (docs/performance.md,
    // "Pipelined responses and whole bodies").
    private const int FlushThreshold = 64 * 1024;

    // Beyond this a send deadline is no deadline (and TimeSpan would overflow): about 31 years.
    private const double MaxSendSeconds = 1e9;

    private readonly FileCatalog _catalog;
    private readonly PeregrineMetrics _metrics;
    private readonly HashSet<string>.AlternateLookup<ReadOnlySpan<char>> _reservedLookup;

    // Bit n is set when a reserved path is n characters long (modulo 64): a path of no such
    // length is not hashed. (Ordinal case-insensitive equals only strings of one length.)
    private readonly ulong _reservedLengths;

    private readonly ConfiguredHeaders _headers;
    private readonly FastPathScope _scope;

    /// <summary>False for <see cref="KestrelFront"/> alone: no request is answered here.</summary>
    private readonly bool _serves;
    private readonly bool _serverHeader;
    private readonly bool _sizeTlsOutput;
    private readonly TimeSpan _keepAliveTimeout;
    private readonly TimeSpan _headersTimeout;
    private readonly MinDataRate? _minResponseDataRate;

    /// <summary>Kestrel's limits for this server, as the fast path applies them: a request beyond them is Kestrel's to refuse.</summary>
    private readonly HeadLimits _headLimits;

    /// <remarks>
    /// <c>scope</c> is what the fast path may answer (<see cref="FastPathScope.Of"/>); null when
    /// it is made for the catalog alone, with no application around it. <c>frontOnly</c> makes
    /// it answer nothing and look at each connection's first head for <see cref="KestrelFront"/>
    /// only, for a server that runs without the fast path. <c>sizeTlsOutput</c> false leaves a
    /// TLS connection's output to Kestrel (<see cref="TlsOutput"/>).
    /// </remarks>
    public Http1FastPath(FileCatalog catalog, PeregrineMetrics metrics, IEnumerable<string> reservedPaths, KestrelServerLimits limits, bool serverHeader, FastPathScope? scope = null, bool frontOnly = false, bool sizeTlsOutput = true)
    {
        _headLimits = new HeadLimits(limits);
        _keepAliveTimeout = limits.KeepAliveTimeout;
        _headersTimeout = limits.RequestHeadersTimeout;
        _minResponseDataRate = limits.MinResponseDataRate;
        _serverHeader = serverHeader;
        _sizeTlsOutput = sizeTlsOutput;
        var options = catalog.Options;
        _catalog = catalog;
        _metrics = metrics;
        var reserved = new HashSet<string>(reservedPaths, StringComparer.OrdinalIgnoreCase);
        _headers = catalog.Headers;
        _reservedLookup = reserved.GetAlternateLookup<ReadOnlySpan<char>>();
        foreach (var path in reserved)
        {
            _reservedLengths |= 1UL << (path.Length & 63);
        }

        // Under a mount point every request goes the middleware's way: the fast path serves the
        // root's paths only. (Misses, and so SPA fallbacks, are always handed off.)
        _scope = scope ?? new FastPathScope(string.IsNullOrEmpty(options.RequestPath.Value) && options.OnPrepareResponse is null, []);
        _serves = _scope.Serves && !frontOnly;
    }

    public Task OnConnectionAsync(ConnectionContext connection, ConnectionDelegate next)
    {
        if (connection.Features.Get<ITlsApplicationProtocolFeature>() is not { } protocol)
        {
            return _serves && PlatformParts.IsNative && connection.Features.Get<IConnectionSocketFeature>()?.Socket is { } socket
                ? ServeSocketAsync(connection, socket, next, connection.Features.Get<ConnectionState>())
                : ServeAsync(connection, connection.Transport.Output, https: false, next);
        }

        if (connection.Features.Get<ISslStreamFeature>() is not { } tls)
        {
            // HTTP/2 by prior knowledge: Kestrel's.
            return next(connection);
        }

        if (!_serves || !_sizeTlsOutput)
        {
            // Nothing answered here, or TLS output sizing is off: TLS output is left to Kestrel;
            // HTTP/2 has no first head.
            return IsHttp1(protocol.ApplicationProtocol.Span) ? ServeAsync(connection, connection.Transport.Output, https: true, next) : next(connection);
        }

        return ServeTlsAsync(connection, protocol, tls, next);
    }

    private async Task ServeTlsAsync(ConnectionContext connection, ITlsApplicationProtocolFeature protocol, ISslStreamFeature tls, ConnectionDelegate next)
    {
        // Over TLS every response, the fast path's and Kestrel's (HTTP/2 included), goes to the
        // SslStream through one TlsRecordWriter for the connection's life (Http1/TlsOutput).
        var output = TlsOutput.Install(connection, tls.SslStream);
        try
        {
            if (IsHttp1(protocol.ApplicationProtocol.Span))
            {
                await ServeAsync(connection, output.Writer, https: true, next);
            }
            else
            {
                await next(connection);
            }
        }
        finally
        {
            output.Remove(connection);
        }
    }

    private async Task ServeSocketAsync(ConnectionContext connection, System.Net.Sockets.Socket socket, ConnectionDelegate next, ConnectionState? carried)
    {
        // Over cleartext the fast path writes to the socket itself, which sends large bodies
        // without copying them (Http1/SocketOutput); Kestrel's pipe is left empty for a
        // hand-off, which comes only after everything written here has been sent. A connection
        // a reactor answered first brings its output, whatever of it the socket had no room for.
        var output = carried?.Output ?? new SocketOutput(socket);
        try
        {
            await ServeAsync(connection, output, https: false, next, carried);
        }
        finally
        {
            output.Complete();
        }
    }

    // No ALPN, or HTTP/1.1 or HTTP/1.0 chosen by it: HTTP/1.x framing either way.
    private static bool IsHttp1(ReadOnlySpan<byte> alpn) => alpn.IsEmpty || alpn.SequenceEqual("http/1.1"u8) || alpn.SequenceEqual("http/1.0"u8);
}
