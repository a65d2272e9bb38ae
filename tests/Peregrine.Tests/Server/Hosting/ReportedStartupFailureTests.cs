using System.Net;
using System.Net.Sockets;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// A start-up failure the server explains itself is printed as its one line, with no stack trace
/// before it and none of the start-up's information lines; a start that succeeds prints them.
/// </summary>
public sealed class ReportedStartupFailureTests
{
    [Fact]
    public async Task PortInUse_PrintsOnlyTheServersOwnLine()
    {
        var (process, port) = await StartOnATakenPortAsync();
        using var owned = process;

        var line = Assert.Single(process.Errors.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith($"peregrine: --port (command line): cannot listen on 127.0.0.1:{port}: ", line);
        Assert.DoesNotContain("Microsoft.Extensions.Hosting", process.Output + process.Errors);
        Assert.DoesNotContain("   at ", process.Output + process.Errors);
    }

    [Fact]
    public async Task PortInUse_PrintsNoInformationLineOfTheStartThatFailed()
    {
        // The catalog is made and its first index begins when the pipeline is built, before
        // Kestrel binds: the platform line always came out, and the index of a small root
        // finished in time for "Indexed" to come out too, beside the error.
        var (process, _) = await StartOnATakenPortAsync();
        using var owned = process;

        Assert.Equal("", process.Output);
        Assert.DoesNotContain("Indexed", process.Errors);
        Assert.DoesNotContain("Platform", process.Errors);
    }

    [Fact]
    public async Task SuccessfulStart_WritesTheLinesHeldUntilItListens()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        using var process = ServerProcess.Start(tree.Root, "--port", "0");

        await process.AddressAsync();

        await process.LineAsync("Platform", TimeSpan.FromSeconds(30));
        await process.LineAsync("Indexed 1 files", TimeSpan.FromSeconds(30));
    }

    /// <summary>A server started on a port another socket holds, once it has exited with status 1, and the port.</summary>
    private static async Task<(ServerProcess Process, int Port)> StartOnATakenPortAsync()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        using var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        var port = ((IPEndPoint)taken.LocalEndpoint).Port;
        var process = ServerProcess.Start(tree.Root, "--port", port.ToString());
        try
        {
            Assert.Equal(1, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
            return (process, port);
        }
        catch
        {
            process.Dispose();
            throw;
        }
    }
}
