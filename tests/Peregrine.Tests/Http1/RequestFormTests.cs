using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine.Tests.Infrastructure;
using static Peregrine.Tests.Http1.FastPathDifferentialTests;

namespace Peregrine.Tests.Http1;

/// <summary>
/// Requests answered against RFC 9110/9112 (Host, request-target, CONNECT), on a server with
/// the fast path and one without: each row gets its status from both, byte for byte alike, and
/// from the path it names on the fast-path server (a row Kestrel answered proves nothing about
/// the fast path; one the fast path answered must be one it may). Kestrel's
/// AllowHostHeaderOverride is off, as in any app that does not set it, or on, as the standalone
/// server sets it: the fast path answers as Kestrel does with either.
/// </summary>
public sealed class RequestFormTests(RequestFormTests.Hosts hosts) : IClassFixture<RequestFormTests.Hosts>
{
    private const string Fast = FastPathDifferentialTests.FastPath;

    [Theory]
    // RFC 9112 §3.2.2: an absolute-form target's authority wins over Host, once Kestrel is told.
    [InlineData(false, "GET http://example.com/index.html HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(true, "GET http://example.com/index.html HTTP/1.1\r\nHost: x\r\n", 200, Kestrel)]
    [InlineData(true, "GET http://example.com/index.html HTTP/1.1\r\nHost: example.com:\r\n", 200, Kestrel)]
    [InlineData(false, "GET http://x/index.html HTTP/1.1\r\nHost: x\r\n", 200, Kestrel)]
    [InlineData(true, "GET http://x/index.html HTTP/1.1\r\nHost: x\r\n", 200, Kestrel)]
    [InlineData(true, "GET http://x/a/b% HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    // RFC 9112 §3.2: a Host that is not uri-host [ ":" port ] (RFC 3986) is a 400.
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n", 400, Kestrel)]
    [InlineData(true, "GET /index.html HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [1:2:3:4:5:6:7:8:9]\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [1::2::3]:80\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [::ffff:192.0.2.256]\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [v7.]\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: a%4\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [::1]\r\n", 200, Fast)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [2001:db8::7]:8080\r\n", 200, Fast)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [::ffff:192.0.2.1]\r\n", 200, Fast)]
    // Valid forms Kestrel refuses itself: taken ahead of it, on the first request of a connection.
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: example.com:\r\n", 200, Kestrel)]
    [InlineData(true, "GET /index.html HTTP/1.1\r\nHost: example.com:\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [::1]:\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [v1.fe80::a+en1]:80\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: [::]\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: a*b,c\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html HTTP/1.1\r\nHost: a%41b:8080\r\n", 200, Kestrel)]
    [InlineData(false, "HEAD /index.html HTTP/1.1\r\nHost: example.com:\r\nConnection: keep-alive\r\n", 200, Kestrel)]
    // RFC 9112 §3 and RFC 3986 §2: an invalid target is a 400, not a 404.
    [InlineData(false, "GET /a/b% HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /a/b%1 HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /a/%zzb HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /a\u0001b HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /a\u007fb HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html#f HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /index.html?a#b HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "GET /%69ndex.html HTTP/1.1\r\nHost: x\r\n", 200, Kestrel)]
    [InlineData(false, "GET /index.html?q=100% HTTP/1.1\r\nHost: x\r\n", 200, Fast)]
    // RFC 9110 §9.3.6, RFC 9112 §3.2.3: CONNECT takes authority-form only, and an origin server
    // that does not tunnel answers 405.
    [InlineData(false, "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n", 405, Fast)]
    [InlineData(false, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n", 405, Fast)]
    [InlineData(false, "CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n", 405, Fast)]
    [InlineData(false, "CONNECT / HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "CONNECT host HTTP/1.1\r\nHost: host\r\n", 400, Kestrel)]
    [InlineData(false, "CONNECT host HTTP/1.1\r\nHost: x\r\n", 400, Kestrel)]
    [InlineData(false, "CONNECT example.com:443 HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n", 400, Kestrel)]
    public async Task Request_GetsTheStatusTheRfcsGive_AlikeFromTheExpectedPath(bool hostOverride, string head, int status, string path)
    {
        var pair = await hosts.For(hostOverride);

        var (plain, fast, handedOff) = await ExchangeBothAsync(pair, head + "Connection: close\r\n\r\n");

        Assert.StartsWith($"HTTP/1.1 {status} ", plain);
        Assert.Equal(plain, fast);
        Assert.Equal(path, handedOff ? Kestrel : Fast);
    }

    [Fact]
    public async Task ConnectToAnAuthority_Gets405WithAllow_AndTheConnectionCloses()
    {
        var pair = await hosts.For(hostOverride: false);

        var (plain, fast, _) = await ExchangeBothAsync(pair, "CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\nGET /index.html HTTP/1.1\r\nHost: x\r\n\r\n");

        Assert.Equal(plain, fast);
        Assert.Contains("Allow: GET, HEAD\n", fast, StringComparison.Ordinal);
        Assert.Contains("Connection: close\n", fast, StringComparison.Ordinal);
        Assert.Single(fast.Split("HTTP/1.1 ", StringSplitOptions.RemoveEmptyEntries));
    }

    [Fact]
    public async Task ValidHostKestrelRefuses_AfterAnotherRequestOnTheConnection_GetsKestrels400OnBothPaths()
    {
        // The look ahead of Kestrel is at a connection's first request only (KestrelFront); the
        // fast path, which answered the first, hands the second to Kestrel as it is.
        var pair = await hosts.For(hostOverride: false);

        var (plain, fast, handedOff) = await ExchangeBothAsync(pair, "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /index.html HTTP/1.1\r\nHost: example.com:\r\n\r\n");

        Assert.Equal(plain, fast);
        Assert.True(handedOff);
        var statuses = fast.Split('\n').Where(l => l.StartsWith("HTTP/1.1 ", StringComparison.Ordinal)).ToArray();
        Assert.Equal(["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"], statuses);
    }

    [Fact]
    public async Task ValidHostKestrelRefuses_ArrivingInPieces_IsTakenAsWhole()
    {
        var pair = await hosts.For(hostOverride: false);
        foreach (var host in new[] { pair.Plain, pair.Fast })
        {
            using var client = new System.Net.Sockets.TcpClient();
            await client.ConnectAsync(host.Address.Host, host.Address.Port);
            var stream = client.GetStream();
            await stream.WriteAsync("GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\n"u8.ToArray());
            await Task.Delay(100);
            await stream.WriteAsync("Accept: */*\r\n\r\n"u8.ToArray());
            var buffer = new byte[64];
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
            var read = await stream.ReadAtLeastAsync(buffer, 12, throwOnEndOfStream: false, timeout.Token);

            Assert.StartsWith("HTTP/1.1 200 ", System.Text.Encoding.ASCII.GetString(buffer, 0, read));
        }
    }

    private static async Task<(string Plain, string Fast, bool HandedOff)> ExchangeBothAsync(HostPair pair, string request)
    {
        var plain = await ExchangeWithPortAsync(pair.Plain, request);
        var fast = await ExchangeWithPortAsync(pair.Fast, request);
        return (Normalise(plain.Response), Normalise(fast.Response), pair.Recorder.TakeHandedOff(fast.ClientPort));
    }

    /// <summary>A pair of servers with Kestrel's AllowHostHeaderOverride off, and one with it on; one tree for both.</summary>
    public sealed class Hosts : IAsyncLifetime
    {
        private readonly TempTree _tree = new();
        private HostPair? _kestrelDefault;
        private HostPair? _hostOverride;

        public async Task InitializeAsync()
        {
            _tree.Write("index.html", "<!doctype html><title>home</title>" + new string('x', 3000));
            static void Override(KestrelServerOptions kestrel) => kestrel.AllowHostHeaderOverride = true;
            _kestrelDefault = await HostPair.StartAsync(_tree.Root, _ => { }, "/index.html");
            _hostOverride = await HostPair.StartAsync(_tree.Root, _ => { }, "/index.html", Override);
        }

        public async Task DisposeAsync()
        {
            await _kestrelDefault!.DisposeAsync();
            await _hostOverride!.DisposeAsync();
            _tree.Dispose();
        }

        internal Task<HostPair> For(bool hostOverride) => Task.FromResult(hostOverride ? _hostOverride! : _kestrelDefault!);
    }
}
