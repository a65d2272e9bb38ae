using System.Net;
using System.Net.Sockets;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

public sealed class ServerTests
{
    private static string SampleSite => Path.Combine(RepositoryRoot.Path, "samples", "site");

    [Fact]
    public async Task StandaloneServer_ServesSampleSiteAndAnswers404Otherwise()
    {
        await using var server = await RunningServer.StartAsync(SampleSite);
        using var client = server.CreateClient();

        using var home = await client.GetAsync("/");
        using var missing = await client.GetAsync("/no-such-file.html");
        using var hidden = await client.GetAsync("/.env");

        Assert.Equal(HttpStatusCode.OK, home.StatusCode);
        Assert.Contains("Peregrine", await home.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, hidden.StatusCode);
    }

    [Fact]
    public async Task StandaloneServer_SpeaksHttp2ByPriorKnowledgeAndHttp11OnOnePort()
    {
        await using var server = await RunningServer.StartAsync(SampleSite);
        using var client = server.CreateClient();

        using var h2 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });
        using var h1 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.Equal(HttpVersion.Version20, h2.Version);
        Assert.Equal(HttpVersion.Version11, h1.Version);
        Assert.Equal(await h1.Content.ReadAsByteArrayAsync(), await h2.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Healthz_IsAlwaysServed()
    {
        await using var server = await RunningServer.StartAsync(SampleSite);
        using var client = server.CreateClient();

        using var health = await client.GetAsync("/healthz");

        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        Assert.Contains("\"ready\"", await health.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Metrics_AreServedOnlyWithTheFlag()
    {
        await using var without = await RunningServer.StartAsync(SampleSite);
        await using var with = await RunningServer.StartAsync(SampleSite, "--metrics");
        using var withoutClient = without.CreateClient();
        using var withClient = with.CreateClient();

        using var absent = await withoutClient.GetAsync("/metrics");
        using var present = await withClient.GetAsync("/metrics");

        Assert.Equal(HttpStatusCode.NotFound, absent.StatusCode);
        Assert.Equal(HttpStatusCode.OK, present.StatusCode);
        Assert.StartsWith("text/plain", present.Content.Headers.ContentType?.ToString());
    }

    [Fact]
    public async Task PortInUse_StopsStartUpNamingIt_WithoutAnIndexingFailure()
    {
        // The first index is still running when the bind fails and the host stops it: that is
        // no indexing failure, and a stack trace of one would bury the reason.
        using var tree = new TempTree();
        for (var i = 0; i < 3000; i++)
        {
            tree.Write($"d{i % 30}/f{i}.txt", "x");
        }

        using var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        var port = ((IPEndPoint)taken.LocalEndpoint).Port;
        using var process = ServerProcess.Start(tree.Root, "--host", "127.0.0.1", "--port", port.ToString());

        Assert.Equal(1, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.Matches($@"(?m)^peregrine: --port \(command line\): cannot listen on 127\.0\.0\.1:{port}: ", process.Errors);
        Assert.DoesNotContain("Indexing", process.Errors);
    }

    [Theory]
    [InlineData("--quiet", false)]
    [InlineData(null, false)]
    [InlineData("--verbose", true)]
    public async Task HostingDiagnostics_AreOffUnlessVerbose_SoKestrelStartsNoActivityPerRequest(string? flag, bool on)
    {
        // ASP.NET Core's hosting starts an Activity for every request while this category is
        // enabled at any level: it asks IsEnabled(Critical).
        await using var server = await RunningServer.StartAsIsAsync([SampleSite, "--port", "0", .. flag is null ? Array.Empty<string>() : [flag]]);
        var hosting = server.App.Services.GetRequiredService<ILoggerFactory>().CreateLogger("Microsoft.AspNetCore.Hosting.Diagnostics");
        using var client = server.CreateClient();

        using var h2 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.Equal(on, hosting.IsEnabled(LogLevel.Critical));
        Assert.Equal(HttpStatusCode.OK, h2.StatusCode);
    }

    [Fact]
    public async Task Flags_ReachTheLibrary()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "<!doctype html><title>shell</title>");
        tree.Write("docs/readme.txt", "read me");
        tree.Write("app.js", "console.log(1)");
        await using var server = await RunningServer.StartAsync(
            tree.Root, "--spa", "--listing", "--cors", "https://a.example", "--header", "X-Frame-Options: DENY",
            "--cache", "*.js=public, max-age=60", "--no-watch", "--no-compression", "--memory-budget", "1M");
        using var client = server.CreateClient();

        using var navigation = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/some/route") { Headers = { { "Accept", "text/html" } } });
        using var listing = await client.GetAsync("/docs/");
        using var script = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/app.js")
        {
            Headers = { { "Origin", "https://a.example" }, { "Accept-Encoding", "br, gzip" } },
        });

        Assert.Contains("shell", await navigation.Content.ReadAsStringAsync());
        Assert.Contains("readme.txt", await listing.Content.ReadAsStringAsync());
        Assert.Equal("https://a.example", script.Headers.GetValues("Access-Control-Allow-Origin").Single());
        Assert.Equal("DENY", script.Headers.GetValues("X-Frame-Options").Single());
        Assert.Equal("public, max-age=60", script.Headers.CacheControl?.ToString());
        Assert.Empty(script.Content.Headers.ContentEncoding);
    }
}
