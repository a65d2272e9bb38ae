using System.Diagnostics;
using System.Runtime.Versioning;
using System.Security.Cryptography;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;

namespace Peregrine.Tests.Safety;

/// <summary>
/// The disk failing under the server, on purpose: the standalone server runs as a process with
/// bench/faults/faultfs.c (an LD_PRELOAD shim, built here with clang) failing its reads of one
/// file with EIO once armed.
/// </summary>
[UnsupportedOSPlatform("windows")]
public sealed class DiskFaultTests
{
    [Fact]
    public async Task ReadFailingMidFile_CutsTheResponseShort_LogsOnce_AndTheNextReadIsWhole()
    {
        using var tree = new TempTree();
        var (bytes, arm) = WriteBigFile(tree);
        using var server = await StartWithFaultAsync(tree, new Dictionary<string, string>
        {
            ["FAULT"] = "eio-read",
            ["FAULT_PATH"] = "big.bin",
            ["FAULT_AFTER"] = (1024 * 1024).ToString(System.Globalization.CultureInfo.InvariantCulture),
            ["FAULT_ARM"] = arm,
        });
        using var client = new HttpClient { BaseAddress = await server.AddressAsync(), Timeout = Timeout.InfiniteTimeSpan };

        // Served once the first index is built (the address is printed before); armed after it.
        Assert.Equal(bytes, await FirstAsync(server, client.GetByteArrayAsync("/big.bin")));
        File.WriteAllText(arm, "");
        try
        {
            for (var i = 0; i < 3; i++)
            {
                // Headers went out before the failing read: the body must be cut short, never complete.
                using var response = await Within(client.GetAsync("/big.bin", HttpCompletionOption.ResponseHeadersRead));
                Assert.Equal(200, (int)response.StatusCode);
                Assert.Equal(bytes.Length, response.Content.Headers.ContentLength);
                await Assert.ThrowsAnyAsync<HttpRequestException>(() => Within(response.Content.ReadAsByteArrayAsync()));
                Assert.Equal("home", await FirstAsync(server, client.GetStringAsync("/index.html")));
            }
        }
        finally
        {
            File.Delete(arm);
        }

        Assert.Equal(bytes, await Within(client.GetByteArrayAsync("/big.bin")));
        var log = await StopAsync(server);
        Assert.Equal(1, CountLines(log, "reading the file failed"));
        Assert.Equal(0, CountLines(log, "unhandled exception"));
    }

    [Fact]
    public async Task ReadThatHangs_IsLoggedOnceWhileItHangs_TheRestIsServed_AndTheResponseEndsWhole()
    {
        using var tree = new TempTree();
        var (bytes, arm) = WriteBigFile(tree);
        using var server = await StartWithFaultAsync(tree, new Dictionary<string, string>
        {
            ["FAULT"] = "hang-read",
            ["FAULT_PATH"] = "big.bin",
            ["FAULT_HANG_MS"] = "9000",
            ["FAULT_ARM"] = arm,
        });
        using var client = new HttpClient { BaseAddress = await server.AddressAsync(), Timeout = TimeSpan.FromSeconds(30) };
        Assert.Equal(bytes, await client.GetByteArrayAsync("/big.bin"));

        // Armed: the next read of big.bin sleeps 9 s in the kernel's stead.
        File.WriteAllText(arm, "");
        var hanging = client.GetByteArrayAsync("/big.bin");
        try
        {
            var line = await server.LineAsync("has not returned", TimeSpan.FromSeconds(15));
            Assert.Contains("big.bin", line);
            Assert.False(hanging.IsCompleted);
            Assert.Equal("home", await client.GetStringAsync("/index.html"));
        }
        finally
        {
            File.Delete(arm);
        }

        // The read returns at last, and the response completes with the right bytes.
        Assert.Equal(bytes, await hanging);
        var log = await StopAsync(server);
        Assert.Equal(1, CountLines(log, "has not returned"));
    }

    [Fact]
    public async Task UnreadableFolder_IsLeftOut_LoggedOnce_AndTheRestIsServed()
    {
        using var tree = new TempTree();
        tree.Write("locked/secret.txt", "secret");
        tree.Write("open/page.txt", "page");
        tree.Write("index.html", "home");
        using var server = await StartWithFaultAsync(tree, new Dictionary<string, string>
        {
            ["FAULT"] = "eacces-open",
            ["FAULT_PATH"] = "/locked",
        });
        using var client = new HttpClient { BaseAddress = await server.AddressAsync(), Timeout = TimeSpan.FromSeconds(20) };

        // 503 until the first index is built; then served.
        var clock = Stopwatch.StartNew();
        while ((await client.GetAsync("/index.html")).StatusCode == System.Net.HttpStatusCode.ServiceUnavailable)
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(15), "no index within 15 s:\n" + server.Output + server.Errors);
            await Task.Delay(20);
        }

        Assert.Equal("page", await client.GetStringAsync("/open/page.txt"));
        Assert.Equal("home", await client.GetStringAsync("/index.html"));
        for (var i = 0; i < 3; i++)
        {
            using var response = await client.GetAsync("/locked/secret.txt");
            Assert.Equal(404, (int)response.StatusCode);
        }

        var log = await StopAsync(server);
        Assert.Equal(1, CountLines(log, "locked: it cannot be read"));
    }

    /// <summary>A 4 MiB big.bin (read from disk, never held in memory) and a home page; the path of the file that arms the fault.</summary>
    private static (byte[] Bytes, string Arm) WriteBigFile(TempTree tree)
    {
        var bytes = RandomNumberGenerator.GetBytes(4 * 1024 * 1024);
        File.WriteAllBytes(Path.Combine(tree.Root, "big.bin"), bytes);
        tree.Write("index.html", "home");
        return (bytes, Path.Combine(tree.Root, "..", $"arm-{Guid.NewGuid():N}"));
    }

    /// <summary>
    /// The standalone server over <paramref name="tree"/> with the fault shim preloaded and
    /// <paramref name="fault"/> in its environment. The shim's file is removed once the server
    /// has printed its address: by then the loader has mapped it.
    /// </summary>
    private static async Task<ServerProcess> StartWithFaultAsync(TempTree tree, Dictionary<string, string> fault)
    {
        var shim = await BuildShimAsync();
        fault["LD_PRELOAD"] = shim;
        var server = ServerProcess.Start(fault, tree.Root, "--port", "0", "--no-watch", "--no-compression");
        try
        {
            await server.AddressAsync();
        }
        finally
        {
            File.Delete(shim);
        }

        return server;
    }

    /// <summary>Stops the server with SIGTERM and returns what it printed.</summary>
    private static async Task<string> StopAsync(ServerProcess server)
    {
        server.Signal(ServerProcess.SIGTERM);
        await server.WaitForExitAsync(TimeSpan.FromSeconds(15));
        return server.Output + "\n" + server.Errors;
    }

    /// <summary>Each request bounded in the test run's own time (<see cref="HangGuard"/>), not on the wall clock.</summary>
    private static Task<T> Within<T>(Task<T> request) => HangGuard.WithinAsync(request, TimeSpan.FromSeconds(20));

    /// <summary>
    /// The first request, which once (in a full run) found the port closed right after the server
    /// printed it: the failure then says whether the server was still running, and what it printed.
    /// </summary>
    private static async Task<T> FirstAsync<T>(ServerProcess server, Task<T> request)
    {
        try
        {
            return await Within(request);
        }
        catch (HttpRequestException ex)
        {
            var state = server.HasExited ? $"exited with status {server.ExitCode}" : "still running";
            throw new Xunit.Sdk.XunitException($"The first request failed ({ex.Message}); the server is {state}.\nOutput:\n{server.Output}\nErrors:\n{server.Errors}");
        }
    }

    private static int CountLines(string log, string text)
        => log.Split('\n').Count(line => line.Contains(text, StringComparison.OrdinalIgnoreCase));

    private static async Task<string> BuildShimAsync()
    {
        var output = Path.Combine(Path.GetTempPath(), $"peregrine-faultfs-{Guid.NewGuid():N}.so");
        var source = Path.Combine(AppContext.BaseDirectory, "faultfs.c");
        using var clang = Process.Start("clang", ["-shared", "-fPIC", "-O2", "-o", output, source, "-ldl"]);
        await HangGuard.WithinAsync(clang.WaitForExitAsync(), TimeSpan.FromSeconds(60));
        Assert.Equal(0, clang.ExitCode);
        return output;
    }
}
