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
        var bytes = RandomNumberGenerator.GetBytes(4 * 1024 * 1024);
        File.WriteAllBytes(Path.Combine(tree.Root, "big.bin"), bytes);
        tree.Write("index.html", "home");
        var arm = Path.Combine(tree.Root, "..", $"arm-{Guid.NewGuid():N}");
        var shim = await BuildShimAsync();
        using var server = ServerProcess.Start(
            new Dictionary<string, string>
            {
                ["LD_PRELOAD"] = shim,
                ["FAULT"] = "eio-read",
                ["FAULT_PATH"] = "big.bin",
                ["FAULT_AFTER"] = (1024 * 1024).ToString(System.Globalization.CultureInfo.InvariantCulture),
                ["FAULT_ARM"] = arm,
            },
            tree.Root, "--port", "0", "--no-watch", "--no-compression");
        using var client = new HttpClient { BaseAddress = await server.AddressAsync(), Timeout = TimeSpan.FromSeconds(20) };

        // Served once the first index is built (the address is printed before); armed after it.
        Assert.Equal(bytes, await client.GetByteArrayAsync("/big.bin"));
        File.WriteAllText(arm, "");
        try
        {
            for (var i = 0; i < 3; i++)
            {
                // Headers went out before the failing read: the body must be cut short, never complete.
                using var response = await client.GetAsync("/big.bin", HttpCompletionOption.ResponseHeadersRead);
                Assert.Equal(200, (int)response.StatusCode);
                Assert.Equal(bytes.Length, response.Content.Headers.ContentLength);
                await Assert.ThrowsAnyAsync<HttpRequestException>(() => response.Content.ReadAsByteArrayAsync());
                Assert.Equal("home", await client.GetStringAsync("/index.html"));
            }
        }
        finally
        {
            File.Delete(arm);
        }

        Assert.Equal(bytes, await client.GetByteArrayAsync("/big.bin"));
        server.Signal(ServerProcess.SIGTERM);
        await server.WaitForExitAsync(TimeSpan.FromSeconds(15));
        var log = server.Output + "\n" + server.Errors;
        Assert.Equal(1, CountLines(log, "reading the file failed"));
        Assert.Equal(0, CountLines(log, "unhandled exception"));
        File.Delete(shim);
    }

    [Fact]
    public async Task ReadThatHangs_IsLoggedOnceWhileItHangs_TheRestIsServed_AndTheResponseEndsWhole()
    {
        using var tree = new TempTree();
        var bytes = RandomNumberGenerator.GetBytes(4 * 1024 * 1024);
        File.WriteAllBytes(Path.Combine(tree.Root, "big.bin"), bytes);
        tree.Write("index.html", "home");
        var arm = Path.Combine(tree.Root, "..", $"arm-{Guid.NewGuid():N}");
        var shim = await BuildShimAsync();
        using var server = ServerProcess.Start(
            new Dictionary<string, string>
            {
                ["LD_PRELOAD"] = shim,
                ["FAULT"] = "hang-read",
                ["FAULT_PATH"] = "big.bin",
                ["FAULT_HANG_MS"] = "9000",
                ["FAULT_ARM"] = arm,
            },
            tree.Root, "--port", "0", "--no-watch", "--no-compression");
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
        server.Signal(ServerProcess.SIGTERM);
        await server.WaitForExitAsync(TimeSpan.FromSeconds(15));
        Assert.Equal(1, CountLines(server.Output + "\n" + server.Errors, "has not returned"));
        File.Delete(shim);
    }

    [Fact]
    public async Task UnreadableFolder_IsLeftOut_LoggedOnce_AndTheRestIsServed()
    {
        using var tree = new TempTree();
        tree.Write("locked/secret.txt", "secret");
        tree.Write("open/page.txt", "page");
        tree.Write("index.html", "home");
        var shim = await BuildShimAsync();
        using var server = ServerProcess.Start(
            new Dictionary<string, string>
            {
                ["LD_PRELOAD"] = shim,
                ["FAULT"] = "eacces-open",
                ["FAULT_PATH"] = "/locked",
            },
            tree.Root, "--port", "0", "--no-watch", "--no-compression");
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

        server.Signal(ServerProcess.SIGTERM);
        await server.WaitForExitAsync(TimeSpan.FromSeconds(15));
        var log = server.Output + "\n" + server.Errors;
        Assert.Equal(1, CountLines(log, "locked: it cannot be read"));
        File.Delete(shim);
    }

    private static int CountLines(string log, string text)
        => log.Split('\n').Count(line => line.Contains(text, StringComparison.OrdinalIgnoreCase));

    private static async Task<string> BuildShimAsync()
    {
        var output = Path.Combine(Path.GetTempPath(), $"peregrine-faultfs-{Guid.NewGuid():N}.so");
        var source = Path.Combine(AppContext.BaseDirectory, "faultfs.c");
        using var clang = Process.Start("clang", ["-shared", "-fPIC", "-O2", "-o", output, source, "-ldl"]);
        await clang.WaitForExitAsync().WaitAsync(TimeSpan.FromSeconds(60));
        Assert.Equal(0, clang.ExitCode);
        return output;
    }
}
