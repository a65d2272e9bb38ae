using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>Plain HTTP sent to the HTTPS port gets nginx's 400 and a line saying why, not an empty reply.</summary>
public sealed class PlainHttpOnTlsPortTests : IDisposable
{
    private readonly TempTree _tree = new();
    private readonly TestCertificate _certificate;

    public PlainHttpOnTlsPortTests()
    {
        _tree.Write("site/index.html", "secure");
        _certificate = new TestCertificate(_tree.Root);
    }

    public void Dispose() => _tree.Dispose();

    /// <summary>Everything the server sends until it closes, within 10 s.</summary>
    private static async Task<string> SendAsync(Uri server, string request)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(server.Host, server.Port);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request));
        using var response = new MemoryStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await stream.CopyToAsync(response, timeout.Token);
        return Encoding.ASCII.GetString(response.ToArray());
    }

    [Theory]
    [InlineData("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: localhost\r\nUser-Agent: curl/8.0\r\nAccept: */*\r\n\r\n")]
    [InlineData("POST /form HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello")]
    [InlineData("G")]
    public async Task PlainHttp_ToTheTlsPort_Gets400SayingSo_ThenTheConnectionCloses(string request)
    {
        await using var server = await RunningServer.StartAsync(Path.Combine(_tree.Root, "site"), "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);

        var response = await SendAsync(server.Address, request);

        Assert.StartsWith("HTTP/1.1 400 Bad Request\r\n", response);
        Assert.Contains("\r\nConnection: close\r\n", response);
        Assert.Contains("\r\nDate: ", response);
        var split = response.IndexOf("\r\n\r\n", StringComparison.Ordinal);
        var body = response[(split + 4)..];
        Assert.Contains("The plain HTTP request was sent to HTTPS port", body);
        Assert.Contains($"\r\nContent-Length: {Encoding.UTF8.GetByteCount(body)}\r\n", response);
    }

    [Fact]
    public async Task WithRedirectHttp_TheHttpsPortAnswers400_AndTheRedirectPortStill308()
    {
        int httpsPort = RunningServer.FreePort(), httpPort = RunningServer.FreePort();
        await using var server = await RunningServer.StartAsIsAsync(
            Path.Combine(_tree.Root, "site"), "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath,
            "-p", httpsPort.ToString(), "--redirect-http", httpPort.ToString(), "-q");

        var tls = await SendAsync(new Uri($"http://127.0.0.1:{httpsPort}"), "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
        var redirect = await SendAsync(new Uri($"http://127.0.0.1:{httpPort}"), "GET /a?b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");

        Assert.StartsWith("HTTP/1.1 400 Bad Request\r\n", tls);
        Assert.StartsWith("HTTP/1.1 308 Permanent Redirect\r\n", redirect);
        Assert.Contains($"\r\nLocation: https://localhost:{httpsPort}/a?b\r\n", redirect);
    }

    [Fact]
    public async Task Https_OnTheSamePort_IsServedAsEver()
    {
        await using var server = await RunningServer.StartAsync(Path.Combine(_tree.Root, "site"), "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);
        using var client = server.CreateClient();

        Assert.Equal("secure", await client.GetStringAsync("/index.html"));
    }
}
