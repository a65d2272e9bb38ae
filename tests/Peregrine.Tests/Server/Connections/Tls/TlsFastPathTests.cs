using System.Diagnostics.Metrics;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>
/// HTTPS through the fast path and the TLS record writer: HTTP/1.1 and HTTP/1.0 requests for
/// files in memory are answered below Kestrel (none reaches the hosting layer), anything else is
/// Kestrel's on the same connection, and every body arrives byte for byte whatever its size, over
/// HTTP/1.1 pipelined and HTTP/2 multiplexed.
/// </summary>
public sealed class TlsFastPathTests : IAsyncLifetime
{
    private static readonly string[] s_files = ["small.html", "mid.js", "large.bin", "disk.bin"];

    private readonly TempTree _tree = new();
    private readonly Dictionary<string, byte[]> _content = [];
    private RunningServer _server = null!;

    public async Task InitializeAsync()
    {
        var sizes = new Dictionary<string, int> { ["small.html"] = 3_584, ["mid.js"] = 31_744, ["large.bin"] = 427_008, ["disk.bin"] = 2_500_000 };
        foreach (var (name, size) in sizes)
        {
            // Random bytes: a piece out of place, repeated or lost shows.
            _content[name] = RandomNumberGenerator.GetBytes(size);
            _tree.Write("site/" + name, _content[name]);
        }

        var certificate = new TestCertificate(_tree.Root);
        _server = await RunningServer.StartAsync(Path.Combine(_tree.Root, "site"), "--tls-cert", certificate.CertPath, "--tls-key", certificate.KeyPath, "--no-compression", "--no-watch");
    }

    public async Task DisposeAsync()
    {
        await _server.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task Http11OverTls_PipelinedFilesInMemory_AnsweredBelowKestrelByteForByte()
    {
        using var requests = new HostingRequests(_server.App.Services);
        await using var tls = await ConnectAsync(SslApplicationProtocol.Http11);
        string[] names = ["small.html", "mid.js", "large.bin", "small.html", "mid.js"];
        await tls.WriteAsync(Encoding.ASCII.GetBytes(string.Concat(names.Select(n => $"GET /{n} HTTP/1.1\r\nHost: localhost\r\n\r\n"))));

        foreach (var name in names)
        {
            var (status, _, body) = await ReadResponseAsync(tls);
            Assert.Equal(200, status);
            Assert.Equal(_content[name], body);
        }

        Assert.Equal(0, requests.Count);
    }

    [Fact]
    public async Task Http11OverTls_OneByteRange_AnsweredBelowKestrelWith206()
    {
        using var requests = new HostingRequests(_server.App.Services);
        await using var tls = await ConnectAsync(SslApplicationProtocol.Http11);
        await tls.WriteAsync(Encoding.ASCII.GetBytes(
            "GET /mid.js HTTP/1.1\r\nHost: localhost\r\nRange: bytes=100-199\r\n\r\n"
            + "GET /large.bin HTTP/1.1\r\nHost: localhost\r\nRange: bytes=-70000\r\n\r\n"));

        var mid = await ReadResponseAsync(tls);
        var large = await ReadResponseAsync(tls);

        Assert.Equal(206, mid.Status);
        Assert.Contains($"\r\nContent-Range: bytes 100-199/{_content["mid.js"].Length}\r\n", mid.Head, StringComparison.Ordinal);
        Assert.Equal(_content["mid.js"][100..200], mid.Body);
        Assert.Equal(206, large.Status);
        var length = _content["large.bin"].Length;
        Assert.Contains($"\r\nContent-Range: bytes {length - 70000}-{length - 1}/{length}\r\n", large.Head, StringComparison.Ordinal);
        Assert.Equal(_content["large.bin"][^70000..], large.Body);
        Assert.Equal(0, requests.Count);
    }

    [Fact]
    public async Task Http11OverTls_RequestsTheFastPathDoesNotTake_GoToKestrel_AndTheConnectionComesBack()
    {
        using var requests = new HostingRequests(_server.App.Services);
        await using var tls = await ConnectAsync(SslApplicationProtocol.Http11);
        await tls.WriteAsync(Encoding.ASCII.GetBytes(
            "GET /small.html HTTP/1.1\r\nHost: localhost\r\n\r\n"
            + "GET /disk.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"
            + "GET /mid.js HTTP/1.1\r\nHost: localhost\r\nIf-Match: *\r\nRange: bytes=100-199\r\n\r\n"
            + "GET /large.bin HTTP/1.1\r\nHost: localhost\r\n\r\n"));

        var small = await ReadResponseAsync(tls);
        var disk = await ReadResponseAsync(tls);
        var range = await ReadResponseAsync(tls);
        var large = await ReadResponseAsync(tls);

        Assert.Equal(200, small.Status);
        Assert.Equal(_content["small.html"], small.Body);
        Assert.Equal(200, disk.Status);
        Assert.Equal(_content["disk.bin"], disk.Body);
        Assert.Equal(206, range.Status);
        Assert.Equal(_content["mid.js"][100..200], range.Body);
        Assert.Equal(200, large.Status);
        Assert.Equal(_content["large.bin"], large.Body);

        // Kestrel answers the disk file and the range under If-Match, lent to it one at a time;
        // the file after them is the fast path's again.
        Assert.Equal(2, requests.Count);
    }

    [Fact]
    public async Task Http10OverTls_OfferedAloneByAlpn_IsAnsweredBelowKestrelAsKestrelWould()
    {
        // The server offers http/1.0 too, as nginx does: a client offering only that (curl
        // --http1.0) would otherwise fail the handshake (RFC 7301 §3.2).
        using var requests = new HostingRequests(_server.App.Services);
        await using var tls = await ConnectAsync(new SslApplicationProtocol("http/1.0"));
        await tls.WriteAsync(Encoding.ASCII.GetBytes(
            "GET /small.html HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\n\r\n"
            + "GET /mid.js HTTP/1.0\r\nHost: localhost\r\n\r\n"));

        var kept = await ReadResponseAsync(tls);
        var last = await ReadResponseAsync(tls);

        // As Kestrel answers HTTP/1.0: an HTTP/1.1 status line, the connection kept while the
        // request asks for keep-alive, and closed after a request that does not.
        Assert.StartsWith("HTTP/1.1 200 OK\r\n", kept.Head, StringComparison.Ordinal);
        Assert.Contains("\r\nConnection: keep-alive\r\n", kept.Head, StringComparison.Ordinal);
        Assert.Equal(_content["small.html"], kept.Body);
        Assert.Contains("\r\nConnection: close\r\n", last.Head, StringComparison.Ordinal);
        Assert.Equal(_content["mid.js"], last.Body);
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        Assert.Equal(0, await tls.ReadAsync(new byte[1], timeout.Token));
        Assert.Equal(0, requests.Count);
    }

    [Fact]
    public async Task Http2OverTls_ManyStreamsOfEverySize_ArriveByteForByte()
    {
        using var client = _server.CreateClient();
        var responses = await Task.WhenAll(Enumerable.Range(0, 24).Select(async i =>
        {
            var name = s_files[i % s_files.Length];
            using var response = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/" + name)
            {
                Version = HttpVersion.Version20,
                VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            });
            return (name, response.Version, Body: await response.Content.ReadAsByteArrayAsync());
        }));

        foreach (var (name, version, body) in responses)
        {
            Assert.Equal(HttpVersion.Version20, version);
            Assert.Equal(_content[name], body);
        }
    }

    private async Task<SslStream> ConnectAsync(SslApplicationProtocol protocol)
    {
        var socket = new TcpClient();
        await socket.ConnectAsync(_server.Address.Host, _server.Address.Port);
        var tls = new SslStream(socket.GetStream(), leaveInnerStreamOpen: false);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            ApplicationProtocols = [protocol],
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        });
        Assert.Equal(protocol, tls.NegotiatedApplicationProtocol);
        return tls;
    }

    private static Task<(int Status, string Head, byte[] Body)> ReadResponseAsync(Stream stream) => RawHttp.ReadFramedResponseAsync(stream);
}
