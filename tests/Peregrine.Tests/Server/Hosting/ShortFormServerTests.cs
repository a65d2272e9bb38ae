using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>The short forms and the options added beside them, through real Kestrel or the server's own process.</summary>
public sealed class ShortFormServerTests : IDisposable
{
    private readonly TempTree _tree = new();

    public ShortFormServerTests()
    {
        _tree.Write("site/index.html", "<!doctype html><title>home</title>");
        _tree.Write("site/docs/default.htm", "default document");
        _tree.Write("site/docs/index.html", "index document");
        _tree.Write("site/.env", "SECRET=1");
        _tree.Write("site/.config/settings.json", "{}");
    }

    private string Site => Path.Combine(_tree.Root, "site");

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData("-p")]
    [InlineData("PORT")]
    public async Task PortFromShortFlagOrPortVariable_IsListenedOn(string source)
    {
        var port = RunningServer.FreePort().ToString();
        var environment = source == "PORT" ? new Dictionary<string, string> { ["PORT"] = port } : [];
        string[] args = source == "PORT" ? [Site, "-q"] : [Site, "-p", port, "-q"];
        await using var server = await RunningServer.StartAsIsAsync(environment, args);
        using var client = server.CreateClient();

        using var response = await client.GetAsync("/");

        Assert.Equal(port, server.Address.Port.ToString());
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task ShortHost_ListensOnThatAddress()
    {
        await using var server = await RunningServer.StartAsIsAsync(Site, "-a", "0.0.0.0", "-p", "0", "-q");
        using var client = new HttpClient();

        using var response = await client.GetAsync($"http://127.0.0.1:{server.Address.Port}/");

        Assert.Equal("0.0.0.0", server.Address.Host);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task Index_NamesTheFileServedForAFolderAndReplacesTheDefaults()
    {
        await using var server = await RunningServer.StartAsync(Site, "--index", "default.htm");
        using var client = server.CreateClient();

        using var docs = await client.GetAsync("/docs/");
        using var home = await client.GetAsync("/");

        Assert.Equal("default document", await docs.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, home.StatusCode);
    }

    [Fact]
    public async Task Index_RepeatedIsTriedInOrder()
    {
        await using var server = await RunningServer.StartAsync(Site, "--index", "default.htm", "--index", "index.html");
        using var client = server.CreateClient();

        using var docs = await client.GetAsync("/docs/");
        using var home = await client.GetAsync("/");

        Assert.Equal("default document", await docs.Content.ReadAsStringAsync());
        Assert.Contains("home", await home.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Hidden_ServesDotFilesAndDotFolders()
    {
        await using var without = await RunningServer.StartAsync(Site);
        await using var with = await RunningServer.StartAsync(Site, "--hidden");
        using var withoutClient = without.CreateClient();
        using var withClient = with.CreateClient();

        using var hidden = await withoutClient.GetAsync("/.env");
        using var shown = await withClient.GetAsync("/.env");
        using var inFolder = await withClient.GetAsync("/.config/settings.json");

        Assert.Equal(HttpStatusCode.NotFound, hidden.StatusCode);
        Assert.Equal("SECRET=1", await shown.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.OK, inFolder.StatusCode);
    }

    [Theory]
    [InlineData("-V")]
    [InlineData("--version")]
    public async Task Version_PrintsThePackageVersionAndExits(string flag)
    {
        using var process = ServerProcess.Start(flag);

        Assert.Equal(0, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        // The version prefix, then a local build's -dev suffix (Directory.Build.props), then the commit.
        Assert.Matches(@"^peregrine 0\.1\.0(-[0-9A-Za-z.]+)?(\+[0-9a-f]+)?$", process.Output.Trim());
    }

    [Fact]
    public async Task ShortHelp_PrintsTheUsageAndExits()
    {
        using var process = ServerProcess.Start("-h");

        Assert.Equal(0, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.StartsWith("Usage: peregrine [ROOT] [options]", process.Output);
        Assert.Contains("-p, --port N", process.Output);
    }

    [Fact]
    public async Task ShortVerbose_PrintsDebugMessages()
    {
        File.CreateSymbolicLink(Path.Combine(Site, "dangling.txt"), Path.Combine(_tree.Root, "gone.txt"));
        using var normal = ServerProcess.Start(Site, "-p", "0");
        using var verbose = ServerProcess.Start(Site, "-p", "0", "-v");
        await normal.AddressAsync();

        var line = await verbose.LineAsync("dangling", TimeSpan.FromSeconds(15));
        await normal.LineAsync("Indexed", TimeSpan.FromSeconds(15));

        Assert.StartsWith("dbug: Peregrine", line);
        Assert.DoesNotContain("dangling", normal.Output + normal.Errors);
    }

    [Fact]
    public async Task ShortQuiet_PrintsNothingWhileServing()
    {
        var port = RunningServer.FreePort();
        using var process = ServerProcess.Start(Site, "-p", port.ToString(), "-q");
        using var client = new HttpClient();

        var response = await RetryUntilListeningAsync(() => client.GetAsync($"http://127.0.0.1:{port}/"));
        process.Signal(ServerProcess.SIGTERM);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(0, await process.WaitForExitAsync(TimeSpan.FromSeconds(15)));
        Assert.Equal("", process.Output + process.Errors);
    }

    /// <summary>A quiet server prints no URL to wait for: try until it answers, within a bound.</summary>
    private static async Task<HttpResponseMessage> RetryUntilListeningAsync(Func<Task<HttpResponseMessage>> request)
    {
        var deadline = DateTime.UtcNow + TimeSpan.FromSeconds(15);
        while (true)
        {
            try
            {
                return await request();
            }
            catch (HttpRequestException) when (DateTime.UtcNow < deadline)
            {
                await Task.Delay(100);
            }
        }
    }
}
