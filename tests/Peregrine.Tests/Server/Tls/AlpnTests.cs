using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;

namespace Peregrine.Tests.Server.Tls;

/// <summary>
/// What the HTTPS server offers by ALPN (RFC 7301): h2, http/1.1 and, as nginx, http/1.0. A
/// client that offers only http/1.0 (curl --http1.0) completes the handshake and is answered as
/// Kestrel answers HTTP/1.0: an HTTP/1.1 status line, and the connection closed after it unless
/// the request asked for keep-alive.
/// </summary>
public sealed class AlpnTests : IDisposable
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(10);

    private readonly TempTree _tree = new();
    private readonly TestCertificate _certificate;

    public AlpnTests()
    {
        _tree.Write("site/index.html", "<!doctype html><title>alpn</title>");
        _certificate = new TestCertificate(_tree.Root);
    }

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData("http/1.0", "GET /index.html HTTP/1.0\r\nHost: localhost\r\n\r\n", "Connection: close")]
    [InlineData("http/1.0", "HEAD /index.html HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\nGET /index.html HTTP/1.0\r\nHost: localhost\r\n\r\n", "Connection: keep-alive")]
    [InlineData("http/1.1", "GET /index.html HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", "Connection: close")]
    public async Task ClientOfferingOneHttp1Protocol_IsAnswered(string alpn, string requests, string connection)
    {
        await using var server = await RunningServer.StartAsync(Path.Combine(_tree.Root, "site"), "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);
        using var socket = new TcpClient();
        await socket.ConnectAsync(server.Address.Host, server.Address.Port);
        await using var tls = new SslStream(socket.GetStream(), leaveInnerStreamOpen: false);
        using var timeout = new CancellationTokenSource(s_bound);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = [new SslApplicationProtocol(alpn)],
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        }, timeout.Token);

        Assert.Equal(alpn, tls.NegotiatedApplicationProtocol.ToString());
        await tls.WriteAsync(Encoding.ASCII.GetBytes(requests), timeout.Token);
        using var received = new MemoryStream();
        await tls.CopyToAsync(received, timeout.Token);

        // Every request answered, with a body for each GET, and the connection closed by the
        // server after the last.
        var text = Encoding.ASCII.GetString(received.ToArray());
        var answers = requests.Split("\r\n\r\n", StringSplitOptions.RemoveEmptyEntries).Length;
        Assert.Equal(answers, text.Split("HTTP/1.1 200 OK\r\n").Length - 1);
        Assert.Contains(connection + "\r\n", text, StringComparison.Ordinal);
        Assert.EndsWith("<!doctype html><title>alpn</title>", text, StringComparison.Ordinal);
    }
}
