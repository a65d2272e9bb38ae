using System.Net.Sockets;
using System.Security.Cryptography;
using Microsoft.AspNetCore.Connections;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>
/// A TLS connection that offers only HTTP/1.1 sends its encrypted output straight to the socket
/// (<see cref="EncryptedOutput"/>) rather than through Kestrel's output pipe. These tests write to
/// the output the TLS layer writes to, and read the socket from the client's side.
/// </summary>
public sealed class EncryptedOutputTests
{
    [Fact]
    public async Task Http11Connection_SendsEveryByteInOrder_H2ConnectionKeepsThePipe()
    {
        await using var listener = ClientHelloTests.Listen(TimeSpan.FromSeconds(10));
        var (client, connection) = await ConnectAsync(listener, ["http/1.1"]);
        await using (connection)
        using (client)
        {
            Assert.IsType<EncryptedOutput>(connection.Transport.Output);
            var first = RandomNumberGenerator.GetBytes(1 << 20);
            var second = RandomNumberGenerator.GetBytes(3 << 20);
            var reading = ReadAsync(client, 4 + first.Length + second.Length);

            // A write through GetSpan and Advance, then one that must follow it, then one sent
            // from the caller's buffer.
            var output = connection.Transport.Output;
            "head"u8.CopyTo(output.GetSpan(4));
            output.Advance(4);
            Assert.Equal(4, output.UnflushedBytes);
            Assert.False((await output.WriteAsync(first)).IsCompleted);
            Assert.Equal(0, output.UnflushedBytes);
            Assert.False((await output.WriteAsync(second)).IsCompleted);

            var received = await reading;
            byte[] expected = [.. "head"u8, .. first, .. second];
            Assert.True(expected.AsSpan().SequenceEqual(received));
        }

        var (h2Client, h2) = await ConnectAsync(listener, ["h2", "http/1.1"]);
        await using (h2)
        using (h2Client)
        {
            Assert.IsNotType<EncryptedOutput>(h2.Transport.Output);
        }
    }

    [Fact]
    public async Task ClientThatStopsReading_HoldsTheWriteUntilItReadsAgain()
    {
        await using var listener = ClientHelloTests.Listen(TimeSpan.FromSeconds(10));
        var (client, connection) = await ConnectAsync(listener, ["http/1.1"]);
        await using (connection)
        using (client)
        {
            // Far more than the socket buffers of both ends hold.
            var body = RandomNumberGenerator.GetBytes(64 << 20);
            var writing = connection.Transport.Output.WriteAsync(body).AsTask();

            await Task.Delay(500);
            Assert.False(writing.IsCompleted);

            var received = await ReadAsync(client, body.Length);
            var result = await writing.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.False(result.IsCompleted);
            Assert.Equal(SHA256.HashData(body), SHA256.HashData(received));
        }
    }

    [Fact]
    public async Task ClientGone_WriteReportsTheOutputCompletedAndTheConnectionCloses()
    {
        await using var listener = ClientHelloTests.Listen(TimeSpan.FromSeconds(10));
        var (client, connection) = await ConnectAsync(listener, ["http/1.1"]);
        await using (connection)
        {
            // Closed with unread bytes and no linger: the server's end gets a reset.
            client.LingerState = new LingerOption(true, 0);
            client.Dispose();

            var output = connection.Transport.Output;
            var body = new byte[64 << 20];
            var result = await output.WriteAsync(body).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.True(result.IsCompleted);

            // Later writes do not throw either, and the connection is closed for Kestrel.
            Assert.True((await output.WriteAsync(body.AsMemory(0, 100))).IsCompleted);
            await Task.Delay(Timeout.Infinite, connection.ConnectionClosed)
                .ContinueWith(_ => { }, TaskScheduler.Default)
                .WaitAsync(TimeSpan.FromSeconds(10));
            Assert.True(connection.ConnectionClosed.IsCancellationRequested);
        }
    }

    /// <summary>Connects with the ClientHello a .NET client sends offering <paramref name="alpn"/>, and returns both ends.</summary>
    private static async Task<(Socket Client, ConnectionContext Connection)> ConnectAsync(ClientHelloListener listener, string[] alpn)
    {
        var hello = await ClientHelloTests.CaptureClientHelloAsync(alpn);
        var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await client.ConnectAsync(listener.EndPoint);
        await client.SendAsync(hello);
        return (client, await ClientHelloTests.AcceptAsync(listener));
    }

    private static async Task<byte[]> ReadAsync(Socket client, int length)
    {
        var received = new byte[length];
        var read = 0;
        while (read < length)
        {
            var n = await client.ReceiveAsync(received.AsMemory(read)).AsTask().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.NotEqual(0, n);
            read += n;
        }

        return received;
    }
}
