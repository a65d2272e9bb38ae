using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// The server process under a service manager's readiness protocol: READY=1 on NOTIFY_SOCKET
/// once the first index is complete, STOPPING=1 when SIGTERM begins the stop.
/// </summary>
public sealed class SystemdNotifyTests
{
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task NotifySocket_GetsReadyAfterTheFirstIndex_AndStoppingOnSigterm(bool abstractNamespace)
    {
        using var tree = new TempTree();
        tree.Write("index.html", "<p>hello</p>");
        var name = $"peregrine-notify-{Environment.ProcessId}-{Guid.NewGuid():N}";
        var path = abstractNamespace ? "@" + name : Path.Combine(Path.GetTempPath(), name + ".sock");
        using var listener = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
        listener.Bind(new UnixDomainSocketEndPoint(abstractNamespace ? "\0" + name : path));
        try
        {
            using var server = ServerProcess.Start(new Dictionary<string, string> { ["NOTIFY_SOCKET"] = path }, tree.Root, "--port", "0", "--no-compression");
            var ready = await ReceiveAsync(listener);
            Assert.Equal("READY=1", ready);

            // Ready means served: the index is in force when the datagram leaves.
            var address = await server.AddressAsync();
            using var client = new HttpClient();
            Assert.Equal("<p>hello</p>", await client.GetStringAsync(new Uri(address, "/index.html")));

            server.Signal(ServerProcess.SIGTERM);
            Assert.Equal("STOPPING=1", await ReceiveAsync(listener));
            Assert.Equal(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(15)));
        }
        finally
        {
            if (!abstractNamespace)
            {
                File.Delete(path);
            }
        }
    }

    [Fact]
    public async Task NoNotifySocket_StartsAndStopsAsBefore()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "x");
        using var server = ServerProcess.Start(new Dictionary<string, string> { ["NOTIFY_SOCKET"] = "" }, tree.Root, "--port", "0", "--no-compression");
        await server.AddressAsync();
        server.Signal(ServerProcess.SIGTERM);
        Assert.Equal(0, await server.WaitForExitAsync(TimeSpan.FromSeconds(15)));
    }

    private static async Task<string> ReceiveAsync(Socket listener)
    {
        var buffer = new byte[256];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
        var read = await listener.ReceiveAsync(buffer, SocketFlags.None, timeout.Token);
        return Encoding.UTF8.GetString(buffer, 0, read);
    }
}
