using System.Net;
using System.Net.Sockets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>A start-up failure the server explains itself is printed as its one line, with no stack trace before it.</summary>
public sealed class ReportedStartupFailureTests
{
    [Fact]
    public async Task PortInUse_PrintsOnlyTheServersOwnLine()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        using var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        var port = ((IPEndPoint)taken.LocalEndpoint).Port;
        using var process = ServerProcess.Start(tree.Root, "--port", port.ToString());

        Assert.Equal(1, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        var line = Assert.Single(process.Errors.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith($"peregrine: --port (command line): cannot listen on 127.0.0.1:{port}: ", line);
        Assert.DoesNotContain("Microsoft.Extensions.Hosting", process.Output + process.Errors);
        Assert.DoesNotContain("   at ", process.Output + process.Errors);
    }
}
