using System.Net;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Server.AccessLog;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.AccessLog;

public sealed class AccessLogTests
{
    private static string SampleSite => Path.Combine(RepositoryRoot.Path, "samples", "site");

    [Fact]
    public async Task AccessLog_WritesOneLinePerRequestToTheFile()
    {
        using var tree = new TempTree();
        var log = Path.Combine(tree.Root, "access.log");
        await using (var server = await RunningServer.StartAsync(SampleSite, $"--access-log={log}"))
        {
            using var client = server.CreateClient();
            client.DefaultRequestHeaders.UserAgent.ParseAdd("peregrine-test/1.0");
            (await client.GetAsync("/css/site.css?v=1")).Dispose();
            (await client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/"))).Dispose();
            (await client.GetAsync("/missing.txt")).Dispose();
            (await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/") { Version = HttpVersion.Version20, VersionPolicy = HttpVersionPolicy.RequestVersionExact })).Dispose();
        }

        // Disposing the server wrote out the queued lines.
        var lines = File.ReadAllLines(log);
        Assert.Equal(4, lines.Length);
        Assert.Matches("""^127\.0\.0\.1 - - \[\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2} \+0000\] "GET /css/site\.css\?v=1 HTTP/1\.1" 200 \d+ "-" "peregrine-test/1\.0" \d+\.\d{3}$""", lines[0]);
        Assert.Contains("\"HEAD / HTTP/1.1\" 200 0 ", lines[1]);
        Assert.Contains("\"GET /missing.txt HTTP/1.1\" 404 ", lines[2]);
        Assert.Contains("\"GET / HTTP/2\" 200 ", lines[3]);
    }

    [Fact]
    public async Task AccessLog_AppendsToAnExistingFile()
    {
        using var tree = new TempTree();
        var log = tree.Write("access.log", "earlier line\n");
        await using (var server = await RunningServer.StartAsync(SampleSite, $"--access-log={log}"))
        {
            using var client = server.CreateClient();
            (await client.GetAsync("/")).Dispose();
        }

        var lines = File.ReadAllLines(log);
        Assert.Equal(2, lines.Length);
        Assert.Equal("earlier line", lines[0]);
    }

    [Fact]
    public async Task NoAccessLog_AddsNoMiddleware()
    {
        await using var server = await RunningServer.StartAsync(SampleSite);

        Assert.Null(server.App.Services.GetService<AccessLogWriter>());
    }

    [Fact]
    public void Fields_AreEscapedSoThatALineCannotBeForged()
    {
        var line = new StringBuilder();

        AccessLogWriter.Format(line, new AccessLogEntry(
            new DateTime(2025, 10, 10, 13, 55, 36, DateTimeKind.Utc),
            IPAddress.Parse("::1"),
            "GET",
            "/a\"b",
            "HTTP/1.1",
            304,
            0,
            "https://r.example/\\",
            "evil\" 200 0 \"x\n127.0.0.1 forged\u00e9",
            1.5));

        Assert.Equal(
            "::1 - - [10/Oct/2025:13:55:36 +0000] \"GET /a\\\"b HTTP/1.1\" 304 0 \"https://r.example/\\\\\" \"evil\\\" 200 0 \\\"x\\x0A127.0.0.1 forged\\xE9\" 1.500\n",
            line.ToString());
    }

    [Fact]
    public void UnknownLength_IsADash()
    {
        var line = new StringBuilder();

        AccessLogWriter.Format(line, new AccessLogEntry(DateTime.UnixEpoch, null, "GET", "/", "HTTP/2", 200, null, null, null, 0));

        Assert.Equal("- - - [01/Jan/1970:00:00:00 +0000] \"GET / HTTP/2\" 200 - \"-\" \"-\" 0.000\n", line.ToString());
    }
}
