using System.Buffers;
using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>
/// TLS ended below Kestrel (<see cref="TlsTerminator"/>, <see cref="TerminatedConnection"/>): for
/// a ClientHello that offers only HTTP/1.1 the listener does the handshake and hands on a
/// connection that is already decrypted, which must look to Kestrel as one its own HTTPS
/// middleware made, and live and end as one of its socket transport's.
/// </summary>
public sealed class TlsTerminatorTests : IDisposable
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(10);

    private readonly TempTree _tree = new();
    private readonly HttpsCertificate _https;

    public TlsTerminatorTests()
    {
        var files = new TestCertificate(_tree.Root);
        var certificate = X509Certificate2.CreateFromPemFile(files.CertPath, files.KeyPath);
        _https = new HttpsCertificate(new LoadedCertificate(certificate, [], new CertificateFiles([], null)));
    }

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task Http11Client_GetsAConnectionDecryptedBelowKestrel_WithTheFeaturesOfKestrelsHttps()
    {
        await using var listener = Listen(s_wait, NullLoggerFactory.Instance, meters: null);
        var (client, tls) = await ConnectAsync(listener, ["http/1.1"]);
        using (client)
        await using (tls)
        {
            await using var connection = await ClientHelloTests.AcceptAsync(listener);
            Assert.IsType<TerminatedConnection>(connection);

            var features = connection.Features;
            Assert.NotNull(features.Get<ITlsConnectionFeature>());
            Assert.Null(features.Get<ITlsConnectionFeature>()!.ClientCertificate);
            Assert.Equal("http/1.1"u8.ToArray(), features.Get<ITlsApplicationProtocolFeature>()!.ApplicationProtocol.ToArray());
            var handshake = features.Get<ITlsHandshakeFeature>()!;
            Assert.Equal(tls.SslProtocol, handshake.Protocol);
            Assert.Equal(tls.NegotiatedCipherSuite, handshake.NegotiatedCipherSuite);
            Assert.Equal("localhost", handshake.HostName);
            Assert.Same(features.Get<ISslStreamFeature>()!.SslStream, features.Get<SslStream>());
            Assert.NotNull(features.Get<IConnectionSocketFeature>()!.Socket);
            Assert.IsType<LargeBlockMemoryPool>(features.Get<IMemoryPoolFeature>()!.MemoryPool);
            Assert.Equal(connection.ConnectionId, features.Get<IConnectionIdFeature>()!.ConnectionId);
            Assert.Equal(13, connection.ConnectionId.Length);
            Assert.Equal(((IPEndPoint)client.Client.LocalEndPoint!).Port, ((IPEndPoint)connection.RemoteEndPoint!).Port);
            Assert.Equal(listener.EndPoint, connection.LocalEndPoint);

            // Each way, every byte in order, decrypted on one side and encrypted on the other.
            var up = RandomNumberGenerator.GetBytes(300_000);
            var sending = tls.WriteAsync(up).AsTask();
            Assert.Equal(up, await ReadAsync(connection.Transport.Input, up.Length));
            await sending;

            var down = RandomNumberGenerator.GetBytes(5 << 20);
            var reading = ReadAsync(tls, down.Length);
            await connection.Transport.Output.WriteAsync(down);
            Assert.Equal(SHA256.HashData(down), SHA256.HashData(await reading));
        }

        // A client that offers h2 is left to Kestrel's TLS: its connection is handed on
        // encrypted.
        var (h2Client, h2Tls) = await ConnectAsync(listener, ["h2", "http/1.1"], handshake: false);
        using (h2Client)
        await using (h2Tls)
        {
            await using var h2 = await ClientHelloTests.AcceptAsync(listener);
            Assert.IsNotType<TerminatedConnection>(h2);
            Assert.Null(h2.Features.Get<ITlsConnectionFeature>());
        }
    }

    [Theory]
    [InlineData(0)]
    [InlineData(20_000)]
    public async Task ClientClosesWhileARequestRuns_ConnectionClosedFires_AndNotBefore(int pipelinedBytes)
    {
        await using var listener = Listen(s_wait, NullLoggerFactory.Instance, meters: null);
        var (client, tls) = await ConnectAsync(listener, ["http/1.1"]);
        using (client)
        await using (tls)
        {
            await using var connection = await ClientHelloTests.AcceptAsync(listener);

            // A request is read, and while it runs nothing reads the connection.
            await tls.WriteAsync("GET / HTTP/1.1\r\n\r\n"u8.ToArray());
            Assert.Equal(18, (await ReadAsync(connection.Transport.Input, 18)).Length);

            // More bytes from the client (a pipelined request) are not its end.
            await Task.Delay(300);
            var pipelined = RandomNumberGenerator.GetBytes(pipelinedBytes);
            await tls.WriteAsync(pipelined);
            await Task.Delay(500);
            Assert.False(connection.ConnectionClosed.IsCancellationRequested);

            // Kestrel's transport would see the client close and fire ConnectionClosed, which
            // aborts the request; so does this connection.
            client.Client.Shutdown(SocketShutdown.Send);
            await WhenClosedAsync(connection);

            // What came before the end is read whole, then the end.
            Assert.Equal(pipelined, await ReadAsync(connection.Transport.Input, pipelined.Length));
            var result = await connection.Transport.Input.ReadAsync().AsTask().WaitAsync(s_wait);
            Assert.True(result.IsCompleted && result.Buffer.IsEmpty);
        }
    }

    [Fact]
    public async Task Abort_FailsTheReadUnderWayWithItsReason_ClosesTheSocket_AndFiresConnectionClosed()
    {
        await using var listener = Listen(s_wait, NullLoggerFactory.Instance, meters: null);
        var (client, tls) = await ConnectAsync(listener, ["http/1.1"]);
        using (client)
        await using (tls)
        {
            await using var connection = await ClientHelloTests.AcceptAsync(listener);
            var reading = connection.Transport.Input.ReadAsync().AsTask();
            await Task.Delay(200);
            Assert.False(reading.IsCompleted);

            // The reason comes through the TLS stream as it does over Kestrel's transport,
            // whose input fails with the abort's reason under the stream: inside an IOException.
            var reason = new ConnectionAbortedException("aborted by the test");
            connection.Abort(reason);
            var thrown = await Assert.ThrowsAsync<IOException>(() => reading.WaitAsync(s_wait));
            Assert.Same(reason, thrown.InnerException);
            await WhenClosedAsync(connection);

            // The client sees the connection end.
            var buffer = new byte[16];
            var ended = await ReadEndAsync(tls, buffer);
            Assert.True(ended);
        }
    }

    [Fact]
    public async Task ClientGone_WritesDoNotThrow_AndTheConnectionIsAborted()
    {
        await using var listener = Listen(s_wait, NullLoggerFactory.Instance, meters: null);
        var (client, tls) = await ConnectAsync(listener, ["http/1.1"]);
        await using var connection = await ClientHelloTests.AcceptAsync(listener);

        // Closed with no linger: the server's end gets a reset.
        client.Client.LingerState = new LingerOption(true, 0);
        client.Dispose();
        await tls.DisposeAsync();

        var output = connection.Transport.Output;
        var body = new byte[64 << 20];
        await output.WriteAsync(body).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
        await output.WriteAsync(body.AsMemory(0, 100)).AsTask().WaitAsync(s_wait);
        await WhenClosedAsync(connection);
    }

    [Fact]
    public async Task Handshake_IsLoggedAndRecordedAsKestrelsMiddlewareDoes()
    {
        var logs = new ListLogger();
        using var meters = new TestMeterFactory();
        using var recorded = new Recorder(meters, "Microsoft.AspNetCore.Server.Kestrel");
        await using var listener = Listen(s_wait, logs, meters);
        var (client, tls) = await ConnectAsync(listener, ["http/1.1"]);
        using (client)
        await using (tls)
        {
            await using var connection = await ClientHelloTests.AcceptAsync(listener);
            var established = Assert.Single(logs.Entries, e => e.Id == 3);
            Assert.Equal("Microsoft.AspNetCore.Server.Kestrel.Https.Internal.HttpsConnectionMiddleware", established.Category);
            Assert.Equal(LogLevel.Debug, established.Level);
            Assert.Contains($"\"{connection.ConnectionId}\"", established.Message);

            var duration = Assert.Single(recorded.Measurements, m => m.Instrument == "kestrel.tls_handshake.duration");
            Assert.True(duration.Value > 0);
            Assert.Equal(tls.SslProtocol == SslProtocols.Tls13 ? "1.3" : "1.2", duration.Tags["tls.protocol.version"]);
            Assert.Equal("127.0.0.1", duration.Tags["server.address"]);
            Assert.Equal(((IPEndPoint)listener.EndPoint).Port, duration.Tags["server.port"]);
            Assert.Equal("ipv4", duration.Tags["network.type"]);
            Assert.Equal("tcp", duration.Tags["network.transport"]);
            Assert.False(duration.Tags.ContainsKey("exception.type"));
            Assert.Equal([1.0, -1.0], recorded.Measurements.Where(m => m.Instrument == "kestrel.active_tls_handshakes").Select(m => m.Value));
        }
    }

    [Fact]
    public async Task SilentClient_TimesOut_NoConnectionIsHandedOn_AndTheTimeoutIsLoggedAndRecorded()
    {
        var logs = new ListLogger();
        using var meters = new TestMeterFactory();
        using var recorded = new Recorder(meters, "Microsoft.AspNetCore.Server.Kestrel");
        await using var listener = Listen(TimeSpan.FromMilliseconds(300), logs, meters);
        using var client = await SendClientHelloOnlyAsync(listener);

        // The server closes the connection once the handshake's time is up.
        var buffer = new byte[4096];
        Assert.True(await DrainToEndAsync(client, buffer));
        var accepting = listener.AcceptAsync().AsTask();
        await Task.Delay(300);
        Assert.False(accepting.IsCompleted);

        Assert.Single(logs.Entries, e => e.Id == 2 && e.Level == LogLevel.Debug && e.Message == "Authentication of the HTTPS connection timed out.");
        var duration = Assert.Single(recorded.Measurements, m => m.Instrument == "kestrel.tls_handshake.duration");
        Assert.True(duration.Tags.ContainsKey("exception.type"));
        Assert.False(duration.Tags.ContainsKey("tls.protocol.version"));
        Assert.Equal([1.0, -1.0], recorded.Measurements.Where(m => m.Instrument == "kestrel.active_tls_handshakes").Select(m => m.Value));
    }

    [Fact]
    public async Task ClientThatFailsTheHandshake_IsLoggedAsAuthenticationFailed()
    {
        var logs = new ListLogger();
        await using var listener = Listen(s_wait, logs, meters: null);

        // A client that gives up after its ClientHello with a fatal alert (handshake_failure).
        using var client = await SendClientHelloOnlyAsync(listener);
        await client.SendAsync(new byte[] { 21, 3, 3, 0, 2, 2, 40 });

        for (var waited = 0; waited < 100 && !logs.Entries.Any(e => e.Id == 1); waited++)
        {
            await Task.Delay(50);
        }

        var failed = Assert.Single(logs.Entries, e => e.Id == 1);
        Assert.Equal("Failed to authenticate HTTPS connection.", failed.Message);
        Assert.NotNull(failed.Exception);
    }

    [Fact]
    public async Task Stopping_EndsTheHandshakesUnderWay()
    {
        var listener = Listen(TimeSpan.FromMinutes(5), NullLoggerFactory.Instance, meters: null);
        using var client = await SendClientHelloOnlyAsync(listener);
        await Task.Delay(300);

        await listener.DisposeAsync().AsTask().WaitAsync(s_wait);
        Assert.True(await DrainToEndAsync(client, new byte[4096]));
    }

    [Fact]
    public async Task Kestrel_TakesATerminatedConnectionAsHttps_AndTagsItsMetricsAsItsOwnTls()
    {
        using var meters = new TestMeterFactory();
        using var recorded = new Recorder(meters, "Microsoft.AspNetCore.Server.Kestrel");
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.Services.AddSingleton<IMeterFactory>(meters);
        builder.WebHost.UseKestrelCore();
        builder.Services.AddSingleton<IConnectionListenerFactory>(services => new ClientHelloTransportFactory(
            services.GetRequiredService<ILoggerFactory>(),
            terminator: new TlsTerminator(_https, services.GetRequiredService<ILoggerFactory>(), meters: null)));
        builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, 0, listen =>
        {
            listen.Protocols = HttpProtocols.Http1AndHttp2;
            _https.UseOn(listen);
        }));
        await using var app = builder.Build();
        app.Run(context => context.Response.WriteAsync(string.Join(
            " ",
            context.Request.Scheme,
            context.Request.IsHttps,
            context.Request.Protocol,
            context.Features.Get<ITlsHandshakeFeature>()?.HostName,
            context.Connection.ClientCertificate is null,
            context.Features.Get<IHttpConnectionFeature>()!.ConnectionId.Length)));
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        try
        {
            using var http = new HttpClient(new SocketsHttpHandler
            {
                SslOptions = { RemoteCertificateValidationCallback = static (_, _, _, _) => true },
            });
            var root = new Uri(address.Replace("127.0.0.1", "localhost", StringComparison.Ordinal));
            foreach (var version in new[] { HttpVersion.Version11, HttpVersion.Version20 })
            {
                using var response = await http.SendAsync(new HttpRequestMessage(HttpMethod.Get, root)
                {
                    Version = version,
                    VersionPolicy = HttpVersionPolicy.RequestVersionExact,
                });
                Assert.Equal(version, response.Version);
                var protocol = version == HttpVersion.Version11 ? "HTTP/1.1" : "HTTP/2";
                Assert.Equal($"https True {protocol} localhost True 13", await response.Content.ReadAsStringAsync());
            }
        }
        finally
        {
            await app.StopAsync();
        }

        // Both connections (HTTP/1.1 over the listener's TLS, h2 over Kestrel's) end with the same
        // TLS tag on Kestrel's connection duration.
        var durations = recorded.Measurements.Where(m => m.Instrument == "kestrel.connection.duration").ToList();
        Assert.Equal(2, durations.Count);
        Assert.All(durations, d => Assert.True(d.Tags.TryGetValue("tls.protocol.version", out var version) && version is "1.2" or "1.3"));
        Assert.Equal(durations[0].Tags["tls.protocol.version"], durations[1].Tags["tls.protocol.version"]);
    }

    private ClientHelloListener Listen(TimeSpan handshakeTimeout, ILoggerFactory loggers, IMeterFactory? meters)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Listen();
        var terminator = new TlsTerminator(_https, loggers, meters, handshakeTimeout);
        return new ClientHelloListener(socket, NullLogger.Instance, new LargeBlockMemoryPool.Factory(), TimeSpan.FromSeconds(10), terminator: terminator);
    }

    /// <summary>Connects and, with <paramref name="handshake"/>, completes a TLS handshake offering <paramref name="alpn"/>.</summary>
    private static async Task<(TcpClient Client, SslStream Tls)> ConnectAsync(ClientHelloListener listener, string[] alpn, bool handshake = true)
    {
        var client = new TcpClient();
        await client.ConnectAsync((IPEndPoint)listener.EndPoint);
        var tls = new SslStream(client.GetStream());
        var authenticating = tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = [.. alpn.Select(p => new SslApplicationProtocol(p))],
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        });
        if (handshake)
        {
            await authenticating.WaitAsync(s_wait);
        }
        else
        {
            _ = authenticating.ContinueWith(static _ => { }, TaskScheduler.Default);
        }

        return (client, tls);
    }

    /// <summary>Sends the ClientHello of a client that offers HTTP/1.1 only, and nothing after it.</summary>
    private static async Task<Socket> SendClientHelloOnlyAsync(ClientHelloListener listener)
    {
        var hello = await ClientHelloTests.CaptureClientHelloAsync(["http/1.1"]);
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.EndPoint);
        await client.SendAsync(hello);
        return client;
    }

    /// <summary>Reads until the server closes: true when it did, within the wait.</summary>
    private static async Task<bool> DrainToEndAsync(Socket client, byte[] buffer)
    {
        try
        {
            while (await client.ReceiveAsync(buffer.AsMemory()).AsTask().WaitAsync(s_wait) > 0)
            {
            }

            return true;
        }
        catch (SocketException)
        {
            return true;
        }
    }

    private static async Task<bool> ReadEndAsync(SslStream tls, byte[] buffer)
    {
        try
        {
            return await tls.ReadAsync(buffer).AsTask().WaitAsync(s_wait) == 0;
        }
        catch (IOException)
        {
            return true;
        }
    }

    private static async Task WhenClosedAsync(ConnectionContext connection)
    {
        await Task.Delay(Timeout.Infinite, connection.ConnectionClosed)
            .ContinueWith(static _ => { }, TaskScheduler.Default)
            .WaitAsync(s_wait);
        Assert.True(connection.ConnectionClosed.IsCancellationRequested);
    }

    private static async Task<byte[]> ReadAsync(PipeReader input, int length)
    {
        var received = new List<byte>(length);
        while (received.Count < length)
        {
            var result = await input.ReadAsync().AsTask().WaitAsync(s_wait);
            var take = (int)Math.Min(result.Buffer.Length, length - received.Count);
            received.AddRange(result.Buffer.Slice(0, take).ToArray());
            input.AdvanceTo(result.Buffer.GetPosition(take));
            Assert.False(result.IsCompleted && received.Count < length);
        }

        return [.. received];
    }

    private static async Task<byte[]> ReadAsync(SslStream tls, int length)
    {
        var received = new byte[length];
        var read = 0;
        while (read < length)
        {
            var n = await tls.ReadAsync(received.AsMemory(read)).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.NotEqual(0, n);
            read += n;
        }

        return received;
    }

    private sealed record Entry(string Category, LogLevel Level, int Id, string Message, Exception? Exception);

    /// <summary>Every entry logged through it, at every level.</summary>
    private sealed class ListLogger : ILoggerFactory
    {
        public ConcurrentQueue<Entry> Queue { get; } = new();

        public IEnumerable<Entry> Entries => Queue;

        public ILogger CreateLogger(string categoryName) => new Logger(this, categoryName);

        public void AddProvider(ILoggerProvider provider)
        {
        }

        public void Dispose()
        {
        }

        private sealed class Logger(ListLogger owner, string category) : ILogger
        {
            public IDisposable? BeginScope<TState>(TState state)
                where TState : notnull => null;

            public bool IsEnabled(LogLevel logLevel) => true;

            public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
                => owner.Queue.Enqueue(new Entry(category, logLevel, eventId.Id, formatter(state, exception), exception));
        }
    }

    private sealed class TestMeterFactory : IMeterFactory
    {
        private readonly List<Meter> _meters = [];

        public Meter Create(MeterOptions options)
        {
            var meter = new Meter(options.Name, options.Version, options.Tags, scope: this);
            _meters.Add(meter);
            return meter;
        }

        public void Dispose()
        {
            foreach (var meter in _meters)
            {
                meter.Dispose();
            }
        }
    }

    private sealed record Measurement(string Instrument, double Value, Dictionary<string, object?> Tags);

    /// <summary>The measurements of the meters named <c>name</c> that <c>factory</c> made (other tests' are apart).</summary>
    private sealed class Recorder : IDisposable
    {
        private readonly MeterListener _listener = new();
        private readonly ConcurrentQueue<Measurement> _measurements = new();

        public Recorder(TestMeterFactory factory, string name)
        {
            _listener.InstrumentPublished = (instrument, listener) =>
            {
                if (instrument.Meter.Name == name && ReferenceEquals(instrument.Meter.Scope, factory))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            _listener.SetMeasurementEventCallback<double>((instrument, value, tags, _) => Add(instrument, value, tags));
            _listener.SetMeasurementEventCallback<long>((instrument, value, tags, _) => Add(instrument, value, tags));
            _listener.Start();
        }

        public IEnumerable<Measurement> Measurements => _measurements;

        private void Add(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            var all = new Dictionary<string, object?>();
            foreach (var tag in tags)
            {
                all[tag.Key] = tag.Value;
            }

            _measurements.Enqueue(new Measurement(instrument.Name, value, all));
        }

        public void Dispose() => _listener.Dispose();
    }
}
