using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>The real server process: SIGTERM, start-up output, and exit codes.</summary>
public sealed class ShutdownTests
{
    [Fact]
    public async Task Sigterm_LetsADownloadInFlightFinishThenExitsZero()
    {
        using var tree = new TempTree();
        var content = RandomNumberGenerator.GetBytes(24 << 20);
        tree.Write("big.bin", content);
        using var server = ServerProcess.Start(tree.Root, "--port", "0", "--no-compression", "--no-watch", "--shutdown-timeout", "8");
        var address = await server.AddressAsync();

        // A small receive buffer and a reader held to 16 MB/s: the 24 MiB body takes about
        // 1.5 s, far longer than socket buffers can hide.
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 16 * 1024 };
        await socket.ConnectAsync(IPAddress.Loopback, address.Port);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET /big.bin HTTP/1.1\r\nHost: {address.Authority}\r\nConnection: close\r\n\r\n"));
        var buffer = new byte[16 * 1024];
        var received = new MemoryStream();
        var headerEnd = -1;
        while (headerEnd < 0)
        {
            var read = await socket.ReceiveAsync(buffer);
            Assert.NotEqual(0, read);
            received.Write(buffer, 0, read);
            headerEnd = received.GetBuffer().AsSpan(0, (int)received.Length).IndexOf("\r\n\r\n"u8);
        }

        Assert.StartsWith("HTTP/1.1 200", Encoding.ASCII.GetString(received.GetBuffer(), 0, headerEnd));
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        hash.AppendData(received.GetBuffer(), headerEnd + 4, (int)received.Length - headerEnd - 4);
        long bodyBytes = received.Length - headerEnd - 4;

        server.Signal(ServerProcess.SIGTERM);
        var signalled = Stopwatch.StartNew();
        var checkedStillRunning = false;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (true)
        {
            var read = await socket.ReceiveAsync(buffer, timeout.Token);
            if (read == 0)
            {
                break;
            }

            hash.AppendData(buffer, 0, read);
            bodyBytes += read;
            if (!checkedStillRunning && signalled.ElapsedMilliseconds > 300)
            {
                // Stopped listening, still sending.
                checkedStillRunning = true;
                Assert.False(server.HasExited, "The server exited while a response was in flight.");
                await Assert.ThrowsAsync<SocketException>(async () =>
                {
                    using var late = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
                    await late.ConnectAsync(IPAddress.Loopback, address.Port);
                });
            }

            var ahead = bodyBytes / (16.0 * 1024 * 1024) - signalled.Elapsed.TotalSeconds;
            if (ahead > 0)
            {
                await Task.Delay(TimeSpan.FromSeconds(ahead));
            }
        }

        Assert.True(checkedStillRunning);
        Assert.Equal(content.Length, bodyBytes);
        Assert.Equal(SHA256.HashData(content), hash.GetHashAndReset());
        Assert.Equal(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(5)));
        Assert.Contains("Indexed 1 files", server.Output);
    }

    [Fact]
    public async Task Sigterm_WithAStalledClient_ClosesItAfterTheShutdownTimeoutAndExitsZero()
    {
        using var tree = new TempTree();
        tree.Write("big.bin", new byte[24 << 20]);
        using var server = ServerProcess.Start(tree.Root, "--port", "0", "--no-compression", "--no-watch", "--shutdown-timeout", "1");
        var address = await server.AddressAsync();
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { ReceiveBufferSize = 16 * 1024 };
        await socket.ConnectAsync(IPAddress.Loopback, address.Port);
        await socket.SendAsync(Encoding.ASCII.GetBytes($"GET /big.bin HTTP/1.1\r\nHost: {address.Authority}\r\n\r\n"));
        Assert.NotEqual(0, await socket.ReceiveAsync(new byte[1024]));

        // The client reads nothing more.
        var signalled = Stopwatch.StartNew();
        server.Signal(ServerProcess.SIGTERM);
        var status = await server.WaitForExitAsync(TimeSpan.FromSeconds(8));

        Assert.Equal(0, status);
        Assert.InRange(signalled.Elapsed, TimeSpan.FromSeconds(0.9), TimeSpan.FromSeconds(6));
    }

    [Fact]
    public async Task BadSettings_ExitWithStatus2AndEveryMessageButNoStackTrace()
    {
        using var server = ServerProcess.Start("--port", "x", "--memory-budget", "lots", "/no/such/folder");

        var status = await server.WaitForExitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(2, status);
        Assert.Equal(
            [
                "peregrine: --port (command line): 'x' is not a port number (0 to 65535).",
                "peregrine: --memory-budget (command line): 'lots' is not a size (bytes, or a number with K, M, G or T, as in 64M).",
                "peregrine: ROOT (command line): '/no/such/folder' does not exist or is not a folder.",
            ],
            server.Errors.Split('\n'));
    }
}
