using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>
/// The TLS server's transport sorts connections by the protocols their ClientHello offers: h2
/// gets Kestrel's default scheduling, anything else inline scheduling. The ClientHellos here are
/// real ones, sent by .NET's own TLS client (OpenSSL on Linux).
/// </summary>
public sealed class ClientHelloTests
{
    [Theory]
    [InlineData(new[] { "h2", "http/1.1" }, "Http2")]
    [InlineData(new[] { "http/1.1", "h2" }, "Http2")]
    [InlineData(new[] { "http/1.1" }, "Http11")]
    [InlineData(new[] { "h2c", "h3", "http/1.1" }, "Http11")]
    [InlineData(new string[0], "Http11")]
    public async Task RealClientHello_IsReadForH2(string[] alpn, string expected)
    {
        var hello = await CaptureClientHelloAsync(alpn);

        Assert.Equal(expected, ClientHello.Read(hello).ToString());
    }

    [Fact]
    public async Task ClientHelloCutAnywhere_IsIncomplete()
    {
        var hello = await CaptureClientHelloAsync(["h2"]);

        for (var length = 0; length < hello.Length; length++)
        {
            Assert.Equal(ClientOffer.Incomplete, ClientHello.Read(hello.AsSpan(0, length)));
        }
    }

    [Fact]
    public async Task ClientHelloWithAnyByteCorrupted_NeverThrows()
    {
        var hello = await CaptureClientHelloAsync(["h2", "http/1.1"]);

        // Every single-byte change past the record header: no length, however wrong, makes the
        // reader step outside the bytes (a span would throw).
        for (var at = 5; at < hello.Length; at++)
        {
            var bad = hello.ToArray();
            bad[at] ^= 0xFF;
            _ = ClientHello.Read(bad);
        }
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")]
    [InlineData("\x15\x03\x03\x00\x02\x02\x28")]
    public void NotAClientHello_IsUnknown(string first)
        => Assert.Equal(ClientOffer.Unknown, ClientHello.Read(Encoding.Latin1.GetBytes(first)));

    [Fact]
    public async Task ListenerHandsH2ConnectionsOnWithQueuedSchedulingAndTheRestInline()
    {
        await using var listener = Listen(TimeSpan.FromSeconds(10));

        await using (var h2 = await ConnectAndAcceptAsync(listener, ["h2", "http/1.1"]))
        {
            Assert.Equal((1, 0), (listener.Http2Connections, listener.OtherConnections));
        }

        await using (var http11 = await ConnectAndAcceptAsync(listener, ["http/1.1"]))
        {
            Assert.Equal((1, 1), (listener.Http2Connections, listener.OtherConnections));
        }
    }

    [Fact]
    public async Task ListenerLeavesTheClientHelloForTheHandshake()
    {
        await using var listener = Listen(TimeSpan.FromSeconds(10));
        var hello = await CaptureClientHelloAsync(["h2"]);
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.EndPoint);
        await client.SendAsync(hello);

        await using var connection = await AcceptAsync(listener);
        var read = await connection.Transport.Input.ReadAtLeastAsync(hello.Length);

        Assert.Equal(hello, read.Buffer.Slice(0, hello.Length).ToArray());
        Assert.Equal(1, listener.Http2Connections);
    }

    /// <summary>
    /// The listening socket holds a new connection in the kernel until its first bytes come
    /// (TCP_DEFER_ACCEPT), so that the peek at them returns at once.
    /// </summary>
    [LinuxFact]
    public async Task Listener_DefersAcceptUntilTheFirstBytesCome()
    {
        await using var listener = Listen(TimeSpan.FromSeconds(10));

        Assert.True(ListeningSockets.DeferAcceptSeconds(((IPEndPoint)listener.EndPoint).Port) > 0);
    }

    [Fact]
    public async Task SilentClient_IsHandedOnAfterThePeekTimeout()
    {
        await using var listener = Listen(TimeSpan.FromMilliseconds(200));
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.EndPoint);

        await using var connection = await AcceptAsync(listener);

        // Handed on unsorted, and the socket still works after the cancelled peek.
        Assert.Equal(1, listener.OtherConnections);
        await client.SendAsync("GET / HTTP/1.1\r\n"u8.ToArray());
        var read = await connection.Transport.Input.ReadAtLeastAsync(16);
        Assert.Equal("GET / HTTP/1.1\r\n", Encoding.ASCII.GetString(read.Buffer.Slice(0, 16).ToArray()));
    }

    [Fact]
    public async Task ClientHelloSentInTwoParts_IsStillRead()
    {
        await using var listener = Listen(TimeSpan.FromSeconds(10));
        var hello = await CaptureClientHelloAsync(["h2"]);
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await client.ConnectAsync(listener.EndPoint);
        await client.SendAsync(hello.AsMemory(0, 40));
        var accept = AcceptAsync(listener);
        await Task.Delay(50);
        Assert.False(accept.IsCompleted);

        await client.SendAsync(hello.AsMemory(40));
        await using var connection = await accept;

        Assert.Equal(1, listener.Http2Connections);
    }

    [Fact]
    public async Task TransportConnections_TakeTheirMemoryInBlocksOf32KiB()
    {
        await using var listener = (ClientHelloListener)await new ClientHelloTransportFactory(NullLoggerFactory.Instance).BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
        await using var connection = await ConnectAndAcceptAsync(listener, ["h2"]);
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.EndPoint);
        var payload = new byte[20_000];
        Random.Shared.NextBytes(payload);
        await client.SendAsync(payload);
        await using var plain = await AcceptAsync(listener);

        // 20,000 bytes arrive in one segment: with Kestrel's 4 KiB blocks they took five.
        var read = await plain.Transport.Input.ReadAtLeastAsync(payload.Length).AsTask().WaitAsync(TimeSpan.FromSeconds(10));
        Assert.Equal(LargeBlockMemoryPool.BlockSize, connection.Features.Get<IMemoryPoolFeature>()!.MemoryPool!.MaxBufferSize);
        Assert.True(read.Buffer.IsSingleSegment);
        Assert.Equal(payload, read.Buffer.ToArray());
    }

    [Theory]
    [InlineData("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "Http2")]
    [InlineData("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\x12\x04\0\0\0\0\0", "Http2")]
    [InlineData("PRI * HTTP/2.0\r\n", "Incomplete")]
    [InlineData("P", "Incomplete")]
    [InlineData("POST / HTTP/1.1\r\n", "Unknown")]
    [InlineData("PRI * HTTP/1.1\r\n\r\nSM\r\n\r\n", "Unknown")]
    [InlineData("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "Unknown")]
    [InlineData("\x16\x03\x01\x02\0\x01", "Unknown")]
    public void CleartextConnection_IsSortedByTheConnectionPreface(string first, string expected)
        => Assert.Equal(expected, ClientHelloListener.ReadPreface(Encoding.Latin1.GetBytes(first)).ToString());

    [Fact]
    public async Task CleartextListener_HandsH2cOnWithQueuedSchedulingAndHttp11Inline()
    {
        await using var listener = (ClientHelloListener)await new ClientHelloTransportFactory(NullLoggerFactory.Instance, cleartextPools: new SharedPools())
            .BindAsync(new IPEndPoint(IPAddress.Loopback, 0));
        var preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray();

        // The preface in two parts: the listener waits for the rest.
        using (var h2c = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true })
        {
            await h2c.ConnectAsync(listener.EndPoint);
            await h2c.SendAsync(preface.AsMemory(0, 10));
            var accept = AcceptAsync(listener);
            await Task.Delay(50);
            Assert.False(accept.IsCompleted);

            await h2c.SendAsync(preface.AsMemory(10));
            await using var connection = await accept;
            Assert.Equal((1, 0), (listener.Http2Connections, listener.OtherConnections));

            // Left in the socket for Kestrel, and the output is Kestrel's pipe.
            var read = await connection.Transport.Input.ReadAtLeastAsync(preface.Length).AsTask().WaitAsync(TimeSpan.FromSeconds(10));
            Assert.Equal(preface, read.Buffer.Slice(0, preface.Length).ToArray());
            Assert.IsNotType<EncryptedOutput>(connection.Transport.Output);

            // HTTP/2's stream pipes take 32 KiB blocks, as over TLS.
            Assert.Equal(LargeBlockMemoryPool.BlockSize, connection.Features.Get<IMemoryPoolFeature>()!.MemoryPool!.MaxBufferSize);
        }

        using var http11 = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await http11.ConnectAsync(listener.EndPoint);
        await http11.SendAsync("GET / HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await using var plain = await AcceptAsync(listener);
        Assert.Equal((1, 1), (listener.Http2Connections, listener.OtherConnections));
        Assert.IsNotType<EncryptedOutput>(plain.Transport.Output);

        // HTTP/1.1 keeps the pool it was given.
        Assert.Same(MemoryPool<byte>.Shared, plain.Features.Get<IMemoryPoolFeature>()!.MemoryPool);
    }

    [Fact]
    public async Task Unbound_AcceptReturnsNothing()
    {
        var listener = Listen(TimeSpan.FromSeconds(10));
        await listener.UnbindAsync();

        Assert.Null(await listener.AcceptAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
        await listener.DisposeAsync();
    }

    internal static ClientHelloListener Listen(TimeSpan peekTimeout)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        socket.Listen();
        return new ClientHelloListener(socket, NullLogger.Instance, new SharedPools(), peekTimeout);
    }

    internal static async Task<ConnectionContext> AcceptAsync(ClientHelloListener listener)
        => (await listener.AcceptAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(10)))!;

    /// <summary>Starts a TLS handshake offering <paramref name="alpn"/> to the listener and returns the connection it hands on.</summary>
    private static async Task<ConnectionContext> ConnectAndAcceptAsync(ClientHelloListener listener, string[] alpn)
    {
        var client = new TcpClient();
        await client.ConnectAsync((IPEndPoint)listener.EndPoint);
        var tls = new SslStream(client.GetStream());

        // Nobody answers the handshake: it only has to send its ClientHello, and ends with the socket.
        _ = tls.AuthenticateAsClientAsync(Options(alpn)).ContinueWith(_ => tls.Dispose(), TaskScheduler.Default);
        var connection = await AcceptAsync(listener);
        client.Dispose();
        return connection;
    }

    /// <summary>The first record a .NET TLS client sends when it offers <paramref name="alpn"/>.</summary>
    internal static async Task<byte[]> CaptureClientHelloAsync(string[] alpn)
    {
        using var server = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        server.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        server.Listen();
        using var client = new TcpClient();
        await client.ConnectAsync((IPEndPoint)server.LocalEndPoint!);
        using var accepted = await server.AcceptAsync();
        await using var tls = new SslStream(client.GetStream());
        var handshake = tls.AuthenticateAsClientAsync(Options(alpn));

        var bytes = new List<byte>();
        var buffer = new byte[8192];
        while (bytes.Count < 5 || bytes.Count < 5 + ((bytes[3] << 8) | bytes[4]))
        {
            var read = await accepted.ReceiveAsync(buffer).WaitAsync(TimeSpan.FromSeconds(10));
            Assert.NotEqual(0, read);
            bytes.AddRange(buffer.AsSpan(0, read));
        }

        accepted.Close();
        await Assert.ThrowsAnyAsync<Exception>(() => handshake);
        return [.. bytes];
    }

    private sealed class SharedPools : IMemoryPoolFactory<byte>
    {
        public MemoryPool<byte> Create(MemoryPoolOptions? options = null) => MemoryPool<byte>.Shared;
    }

    private static SslClientAuthenticationOptions Options(string[] alpn) => new()
    {
        TargetHost = "localhost",
        ApplicationProtocols = alpn.Length == 0 ? null : [.. alpn.Select(p => new SslApplicationProtocol(p))],
        RemoteCertificateValidationCallback = static (_, _, _, _) => true,
    };
}
