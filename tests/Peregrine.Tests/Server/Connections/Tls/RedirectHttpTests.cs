using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>--redirect-http: plain HTTP on its own port answered with 308 to the HTTPS URL; HSTS by --header.</summary>
public sealed class RedirectHttpTests : IDisposable
{
    private const string Hsts = "max-age=63072000; includeSubDomains";

    private readonly TempTree _tree = new();
    private readonly TestCertificate _certificate;

    public RedirectHttpTests()
    {
        _tree.Write("site/index.html", "<!doctype html><title>secure</title>");
        _tree.Write("site/docs/page.html", "<!doctype html><title>page</title>");
        _certificate = new TestCertificate(_tree.Root);
    }

    private string Site => Path.Combine(_tree.Root, "site");

    private string[] Tls => ["--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath];

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData("/docs/page.html?a=1&b=%20x")]
    [InlineData("/")]
    [InlineData("/no/such/file?q")]
    [InlineData("/caf%C3%A9/a%2Fb")]
    public async Task PlainHttp_IsAnswered308ToTheSamePathAndQueryOnTheHttpsPort(string target)
    {
        await using var server = await RunningServer.StartAsync([Site, .. Tls, "--redirect-http", "0"]);
        var (http, https) = Ports(server);

        var (status, location) = await PlainRequestAsync(http, "GET", target);

        Assert.Equal(308, status);
        Assert.Equal($"https://127.0.0.1:{https}{target}", location);
    }

    [Fact]
    public async Task RedirectKeepsTheHostTheClientAskedForAndTheMethod()
    {
        int httpsPort = RunningServer.FreePort(), httpPort = RunningServer.FreePort();
        await using var server = await RunningServer.StartAsIsAsync([Site, .. Tls, "-p", httpsPort.ToString(), "--redirect-http", httpPort.ToString(), "-q"]);

        var (status, location) = await PlainRequestAsync(httpPort, "POST", "/form?x=1", $"files.example:{httpPort}");

        Assert.Equal(308, status);
        Assert.Equal($"https://files.example:{httpsPort}/form?x=1", location);
    }

    [Fact]
    public async Task HttpsPort_StillServesFiles()
    {
        await using var server = await RunningServer.StartAsync([Site, .. Tls, "--redirect-http", "0"]);
        using var client = server.CreateClient();

        using var response = await client.GetAsync("/docs/page.html");

        Assert.Equal("https", server.Address.Scheme);
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Contains("page", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task RedirectTarget_IsFollowedToTheFile()
    {
        await using var server = await RunningServer.StartAsync([Site, .. Tls, "--redirect-http", "0"]);
        var (http, _) = Ports(server);
        using var client = new HttpClient(new SocketsHttpHandler
        {
            SslOptions = { RemoteCertificateValidationCallback = static (_, _, _, _) => true },
        });

        using var response = await client.GetAsync($"http://127.0.0.1:{http}/docs/page.html");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("https", response.RequestMessage!.RequestUri!.Scheme);
        Assert.Contains("page", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public void RedirectPortThatIsTheHttpsPort_IsAnErrorNamingBoth()
    {
        var loaded = SettingsLoader.Load([Site, .. Tls, "--port", "8443", "--redirect-http", "8443"], new Dictionary<string, string>());

        Assert.Equal(
            "--redirect-http (command line): 8443 is the HTTPS port (--port (command line)); give another.",
            Assert.Single(loaded.Errors));
    }

    [Fact]
    public async Task RedirectPortInUse_StopsStartUpNamingIt()
    {
        using var taken = new TcpListener(IPAddress.Loopback, 0);
        taken.Start();
        var port = ((IPEndPoint)taken.LocalEndpoint).Port;
        using var process = Hosting.ServerProcess.Start([Site, .. Tls, "--port", "0", "--redirect-http", port.ToString()]);

        Assert.Equal(1, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.Matches($@"(?m)^peregrine: --redirect-http \(command line\): cannot listen on 127\.0\.0\.1:{port}: ", process.Errors);
    }

    [Fact]
    public async Task Hsts_ByHeader_IsSentOverHttpsByTheFastPathAndByTheMiddleware()
    {
        await using var server = await RunningServer.StartAsync([Site, .. Tls, "--header", $"Strict-Transport-Security: {Hsts}"]);
        using var requests = new HostingRequests(server.App.Services);

        // HTTP/1.1 for a file in memory: the fast path, below Kestrel's hosting layer. Read to
        // the end: had the middleware answered, it would have counted the request by then.
        string fastHead;
        using (var socket = new TcpClient())
        {
            await socket.ConnectAsync(server.Address.Host, server.Address.Port);
            await using var tls = new SslStream(socket.GetStream());
            await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
            {
                TargetHost = "localhost",
                ApplicationProtocols = [SslApplicationProtocol.Http11],
                RemoteCertificateValidationCallback = static (_, _, _, _) => true,
            });
            await tls.WriteAsync("GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"u8.ToArray());
            using var response = new MemoryStream();
            await tls.CopyToAsync(response).WaitAsync(TimeSpan.FromSeconds(10));
            fastHead = Encoding.ASCII.GetString(response.ToArray());
        }

        Assert.Equal(0, requests.Count);

        // HTTP/2, which only Kestrel and the middleware speak.
        using var client = server.CreateClient();
        using var h2 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/index.html")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.StartsWith("HTTP/1.1 200", fastHead);
        Assert.Contains($"\r\nStrict-Transport-Security: {Hsts}\r\n", fastHead);
        Assert.Equal(HttpVersion.Version20, h2.Version);
        Assert.Equal(Hsts, h2.Headers.GetValues("Strict-Transport-Security").Single());
    }

    private static (int Http, int Https) Ports(RunningServer server)
    {
        var addresses = server.Addresses;
        return (addresses.Single(a => a.Scheme == "http").Port, addresses.Single(a => a.Scheme == "https").Port);
    }

    /// <summary>One request over plain HTTP/1.1 with the Host header given; the status and Location.</summary>
    private static async Task<(int Status, string? Location)> PlainRequestAsync(int port, string method, string target, string? host = null)
    {
        var (status, head, _) = await RawHttp.SendAsync(new Uri($"http://127.0.0.1:{port}"), target, method, method == "POST" ? "Content-Length: 0\r\n" : "", host);
        var location = head.Split("\r\n").FirstOrDefault(l => l.StartsWith("Location:", StringComparison.OrdinalIgnoreCase))?[9..].Trim();
        return (status, location);
    }
}
