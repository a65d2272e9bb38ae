using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Peregrine.Http1;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// A connection whose TLS was ended by <see cref="TlsTerminator"/>, handed to Kestrel with its
/// transport already decrypted: the <see cref="SslStream"/> reads and writes the socket itself,
/// through <see cref="SocketStream"/>, without Kestrel's socket transport and its pipes below
/// the stream. It carries the features Kestrel's <c>HttpsConnectionMiddleware</c> sets
/// (<see cref="ITlsConnectionFeature"/>, <see cref="ITlsHandshakeFeature"/>,
/// <see cref="ITlsApplicationProtocolFeature"/>, <see cref="ISslStreamFeature"/>), so the
/// middleware passes it on, and Kestrel's HTTP layer takes it as HTTPS (scheme and ALPN), and those of
/// Kestrel's socket transport (id, end points, socket, memory pool, lifetime).
/// </summary>
/// <remarks>
/// Its lifetime is kept as Kestrel's socket transport keeps a connection's:
/// <see cref="ConnectionClosed"/> fires once the client's end of the input is seen (a FIN, or
/// a reset) or the connection is aborted; <see cref="Abort"/> shuts the socket down and closes
/// it, and a read then fails with the reason given; a failed send aborts the connection; and
/// <see cref="DisposeAsync"/>, after Kestrel is done with the connection, closes the socket
/// gracefully.
/// </remarks>
internal sealed class TerminatedConnection : ConnectionContext,
    IConnectionIdFeature, IConnectionTransportFeature, IConnectionItemsFeature, IMemoryPoolFeature,
    IConnectionLifetimeFeature, IConnectionEndPointFeature, IConnectionSocketFeature,
    ITlsConnectionFeature, ITlsHandshakeFeature, ITlsApplicationProtocolFeature, ISslStreamFeature
{
    private readonly SocketStream _stream;
    private readonly SslStream _tls;
    private readonly CancellationTokenSource _closed = new();
    private readonly PipeReader _input;
    private readonly PipeWriter _output;
    private IDictionary<object, object?>? _items;
    private int _closedFired;
    private int _disposed;

    public TerminatedConnection(SocketStream stream, SslStream tls, MemoryPool<byte> pool)
    {
        _stream = stream;
        _tls = tls;
        stream.Connection = this;
        Socket = stream.Socket;
        MemoryPool = pool;
        ConnectionId = ConnectionIds.Next();
        LocalEndPoint = Socket.LocalEndPoint;
        RemoteEndPoint = Socket.RemoteEndPoint;
        ConnectionClosed = _closed.Token;

        // As HttpsConnectionMiddleware makes its pipes over the stream (CreateSslDuplexPipe):
        // reads of at least half a 4 KiB segment into the connection's pool, waiting for data
        // with a zero-byte read before renting, so an idle connection holds no block.
        var segment = Math.Min(4096, pool.MaxBufferSize);
        _input = PipeReader.Create(tls, new StreamPipeReaderOptions(pool, bufferSize: segment, minimumReadSize: segment / 2, leaveOpen: true, useZeroByteReads: true));
        _output = PipeWriter.Create(tls, new StreamPipeWriterOptions(pool, minimumBufferSize: segment, leaveOpen: true));
        Transport = new DuplexPipe(_input, _output);

        var features = new FeatureCollection();
        features.Set<IConnectionIdFeature>(this);
        features.Set<IConnectionTransportFeature>(this);
        features.Set<IConnectionItemsFeature>(this);
        features.Set<IMemoryPoolFeature>(this);
        features.Set<IConnectionLifetimeFeature>(this);
        features.Set<IConnectionEndPointFeature>(this);
        features.Set<IConnectionSocketFeature>(this);
        features.Set<ITlsConnectionFeature>(this);
        features.Set<ITlsHandshakeFeature>(this);
        features.Set<ITlsApplicationProtocolFeature>(this);
        features.Set<ISslStreamFeature>(this);

        // HttpsConnectionMiddleware sets it too ("anti-pattern, but retained for back compat").
        features.Set(tls);
        Features = features;
    }

    public override string ConnectionId { get; set; }

    public override IFeatureCollection Features { get; }

    public override IDictionary<object, object?> Items
    {
        get => _items ??= new Dictionary<object, object?>();
        set => _items = value;
    }

    public override IDuplexPipe Transport { get; set; }

    public MemoryPool<byte> MemoryPool { get; }

    public Socket Socket { get; }

    public SslStream SslStream => _tls;

    public override CancellationToken ConnectionClosed { get; set; }

    public override EndPoint? LocalEndPoint { get; set; }

    public override EndPoint? RemoteEndPoint { get; set; }

    // ITlsConnectionFeature: no client certificates are asked for (Connections/Tls/HttpsCertificate).
    public X509Certificate2? ClientCertificate
    {
        get => _tls.RemoteCertificate as X509Certificate2;
        set => throw new NotSupportedException();
    }

    public Task<X509Certificate2?> GetClientCertificateAsync(CancellationToken cancellationToken) => Task.FromResult(ClientCertificate);

    // ITlsHandshakeFeature, read from the stream as Kestrel's TlsConnectionFeature reads them.
    public SslProtocols Protocol => _tls.SslProtocol;

    public TlsCipherSuite? NegotiatedCipherSuite => _tls.NegotiatedCipherSuite;

    public string HostName => _tls.TargetHostName;

#pragma warning disable SYSLIB0058 // The algorithm properties are obsolete in the interface too.
    public CipherAlgorithmType CipherAlgorithm => _tls.CipherAlgorithm;

    public int CipherStrength => _tls.CipherStrength;

    public HashAlgorithmType HashAlgorithm => _tls.HashAlgorithm;

    public int HashStrength => _tls.HashStrength;

    public ExchangeAlgorithmType KeyExchangeAlgorithm => _tls.KeyExchangeAlgorithm;

    public int KeyExchangeStrength => _tls.KeyExchangeStrength;
#pragma warning restore SYSLIB0058

    public ReadOnlyMemory<byte> ApplicationProtocol => _tls.NegotiatedApplicationProtocol.Protocol;

    /// <summary>
    /// As Kestrel's socket transport: the socket is shut down both ways and closed (a read under
    /// way fails with <paramref name="abortReason"/>), and <see cref="ConnectionClosed"/> fires.
    /// </summary>
    public override void Abort(ConnectionAbortedException abortReason)
    {
        _stream.Shut(abortReason);
        FireClosed();
    }

    /// <summary>The client's end of the input was seen, or the connection ended: <see cref="ConnectionClosed"/> fires, off the caller's thread (as Kestrel's transport fires it).</summary>
    internal void FireClosed()
    {
        if (Interlocked.Exchange(ref _closedFired, 1) == 0)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static closed => closed.Cancel(), _closed, preferLocal: false);
        }
    }

    /// <summary>Called by Kestrel once the connection's middleware is done: the pipes and the stream go, and the socket is closed gracefully.</summary>
    public override async ValueTask DisposeAsync()
    {
        if (Interlocked.Exchange(ref _disposed, 1) != 0)
        {
            return;
        }

        await _input.CompleteAsync();
        await _output.CompleteAsync();
        _stream.Shut(reason: null);
        await _tls.DisposeAsync();
        if (Interlocked.Exchange(ref _closedFired, 1) == 0)
        {
            // Nothing is registered any more; the source has no timer, so it is not disposed.
            _closed.Cancel();
        }
    }

    /// <summary>
    /// A connection middleware that puts the TLS version among the connection's metric tags
    /// (<c>tls.protocol.version</c> on <c>kestrel.connection.duration</c>), as Kestrel's
    /// <c>HttpsConnectionMiddleware</c> does after its own handshakes: the tags exist only once
    /// Kestrel has taken the connection, and the middleware passes a terminated one on untouched.
    /// </summary>
    internal static ConnectionDelegate TagMetrics(ConnectionDelegate next) => connection =>
    {
        if (connection is TerminatedConnection terminated
            && connection.Features.Get<IConnectionMetricsTagsFeature>() is { } metrics
            && TlsTerminator.Version(terminated._tls.SslProtocol) is { } version)
        {
            metrics.Tags.Add(new KeyValuePair<string, object?>("tls.protocol.version", version));
        }

        return next(connection);
    };

    /// <summary>Ids like Kestrel's (13 characters of base 32), from a sequence of their own: these begin with "4", Kestrel's with "0".</summary>
    private static class ConnectionIds
    {
        private static readonly char[] s_digits = "0123456789ABCDEFGHIJKLMNOPQRSTUV".ToCharArray();
        private static long s_last = DateTime.UtcNow.Ticks | (1L << 62);

        public static string Next()
        {
            var id = Interlocked.Increment(ref s_last);
            return string.Create(13, id, static (chars, id) =>
            {
                for (var i = 12; i >= 0; i--)
                {
                    chars[i] = s_digits[(int)(id & 31)];
                    id >>= 5;
                }
            });
        }
    }
}
