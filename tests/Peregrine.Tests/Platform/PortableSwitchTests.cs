using Peregrine.Interop;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;

namespace Peregrine.Tests.Platform;

/// <summary>
/// <c>PEREGRINE_PORTABLE</c> switches the parts a process uses (<see cref="PlatformParts"/>): read
/// once per process, so each case starts the server as a process of its own with the variable
/// set either way, whichever way this run itself was started.
/// </summary>
public sealed class PortableSwitchTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);
    private readonly TempTree _tree = new();

    [Theory]
    [InlineData("1", true)]
    [InlineData("true", true)]
    [InlineData(" TRUE ", true)]
    [InlineData("0", false)]
    [InlineData("false", false)]
    [InlineData("", false)]
    [InlineData(null, false)]
    [InlineData("yes", false)]
    public void Switch_Value_IsReadAsDocumented(string? value, bool forced)
        => Assert.Equal(forced, PlatformParts.IsSet(value));

    [Fact]
    public async Task ServerProcess_WithTheSwitch_SaysPortableAndServesALiveEdit()
    {
        _tree.Write("page.txt", "first");
        using var server = ServerProcess.Start(new Dictionary<string, string> { [PlatformParts.PortableVariable] = "1" }, _tree.Root, "--port", "0");
        var address = await server.AddressAsync();

        var line = await server.LineAsync("Platform", Bound);
        Assert.EndsWith("Platform (portable, PEREGRINE_PORTABLE=1): FileSystemWatcher watching, plain copies, no leases, no zstd.", line.Trim());

        using var client = new HttpClient { BaseAddress = address };
        Assert.Equal("first", await client.GetStringAsync("/page.txt"));

        _tree.Write("page.txt", "second, longer");
        await EventuallyServedAsync(client, "/page.txt", "second, longer");

        // The switch is the library's, not a server setting to warn about.
        Assert.DoesNotContain(PlatformParts.PortableVariable, server.Errors);
    }

    [LinuxFact]
    public async Task ServerProcess_WithoutTheSwitch_SaysNativeOnLinux()
    {
        _tree.Write("page.txt", "first");
        using var server = ServerProcess.Start(new Dictionary<string, string> { [PlatformParts.PortableVariable] = "0" }, _tree.Root, "--port", "0");
        await server.AddressAsync();

        var line = await server.LineAsync("Platform", Bound);
        Assert.Matches(@"Platform: inotify watching, FICLONE or copy_file_range copies, leases for open writers, (zstd \(libzstd \d+\.\d+\.\d+\)|no zstd)\.$", line.Trim());
    }

    [Fact]
    public async Task ServerProcess_WithoutZstd_OffersNoCompressionDictionary()
    {
        // RFC 9842: Use-As-Dictionary only where a delta against the file can be made, which
        // needs libzstd; the portable parts never load it.
        _tree.Write("assets/app-0a1b2c3d.js", string.Concat(Enumerable.Repeat("export const a = 1;\n", 200)));
        using var server = ServerProcess.Start(new Dictionary<string, string> { [PlatformParts.PortableVariable] = "1" }, _tree.Root, "--port", "0");
        using var client = new HttpClient { BaseAddress = await server.AddressAsync() };

        using var response = await client.GetAsync("/assets/app-0a1b2c3d.js");

        Assert.Equal(System.Net.HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("public, max-age=31536000, immutable", response.Headers.CacheControl!.ToString());
        Assert.False(response.Headers.Contains("Use-As-Dictionary"));
        Assert.DoesNotContain("Available-Dictionary", response.Headers.Vary);
    }

    private static async Task EventuallyServedAsync(HttpClient client, string path, string expected)
    {
        using var guard = new HangGuard(Bound);
        string? last = null;
        while (!guard.Token.IsCancellationRequested)
        {
            last = await client.GetStringAsync(path);
            if (last == expected)
            {
                return;
            }

            await Task.Delay(50);
        }

        Assert.Fail($"{path} still served \"{last}\" after {Bound.TotalSeconds} s, not \"{expected}\".");
    }

    public void Dispose() => _tree.Dispose();
}
