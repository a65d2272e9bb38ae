using System.Collections.Concurrent;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>
/// The fast path answers exactly as the middleware does: the same request, byte for byte, to a
/// server with the fast path and to one without, gets the same status, the same headers (but
/// Date, and in any order) and the same body. Each row also says which path must answer it on
/// the fast-path server, and the test checks that it did: a row that Kestrel answered proves
/// nothing about the fast path, and one the fast path answered must be one it may. Requests the
/// fast path does not take must reach Kestrel intact, including in the middle of a pipelined
/// connection. The rows that depend on options run under each option set below.
/// </summary>
public sealed class FastPathDifferentialTests(FastPathDifferentialTests.Hosts hosts) : IClassFixture<FastPathDifferentialTests.Hosts>
{
    public const string FastPath = "fast path";
    public const string Kestrel = "Kestrel";

    /// <summary>
    /// Option sets, and which requests each sends to Kestrel beyond those that go there under the
    /// defaults: with a list of CORS origins the answer depends on Origin, and under a mount
    /// point the fast path serves nothing.
    /// </summary>
    private static readonly Dictionary<string, OptionSet> s_sets = new()
    {
        ["defaults"] = new(o => o.Headers["X-Content-Type-Options"] = "nosniff"),
        ["cors-any"] = new(o => o.CorsOrigins.Add("*")),
        ["cors-list"] = new(o => o.CorsOrigins = ["https://a.example", "https://b.example"], HandsOff: head => head.Contains("Origin:", StringComparison.Ordinal)),
        ["headers"] = new(o =>
        {
            o.Headers["X-Content-Type-Options"] = "nosniff";
            o.Headers["Access-Control-Allow-Origin"] = "https://c.example";
            o.Headers["Cache-Control"] = "public, max-age=60";
        }),
        ["headers+cors-any"] = new(o =>
        {
            o.CorsOrigins.Add("*");
            o.Headers["Access-Control-Allow-Origin"] = "https://c.example";
            o.Headers["Cache-Control"] = "public, max-age=60";
        }),
        ["cache-rules"] = new(o => o.CacheRules = [new("*.css", "public, max-age=3600"), new("img/**", ""), new("index.html", "no-store")]),
        ["spa"] = new(o => o.SpaFallback = "index.html"),
        ["mount"] = new(o => o.RequestPath = "/static", Base: "/static", HandsOff: _ => true),

        // The defaults, with the connections read by the standalone server's cleartext reactor.
        ["reactor"] = new(o => o.Headers["X-Content-Type-Options"] = "nosniff", Reactor: true),
    };

    /// <summary>Requests whose answer depends on options, run under every option set.</summary>
    private static readonly (string Head, string Path)[] s_optionRows =
    [
        ("GET {base}/index.html HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("HEAD {base}/index.html HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET {base}/ HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET {base}/css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip\r\n", FastPath),
        ("GET {base}/css/site.css HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET {base}/img/a.png HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET {base}/index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n", FastPath),
        ("GET {base}/img/a.png HTTP/1.1\r\nHost: x\r\nOrigin: https://a.example\r\n", FastPath),
        ("GET {base}/img/a.png HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\n", FastPath),
        ("GET {base}/missing.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET {base}/app/route HTTP/1.1\r\nHost: x\r\nAccept: text/html\r\n", Kestrel),
        ("GET {base}/docs HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET {base}/index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n", FastPath),
        ("GET {base}/css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip\r\nRange: bytes=10-20\r\n", FastPath),
    ];

    public static TheoryData<string, string, string> OptionRows()
    {
        var rows = new TheoryData<string, string, string>();
        foreach (var (name, set) in s_sets)
        {
            foreach (var (head, path) in s_optionRows)
            {
                rows.Add(name, head, set.HandsOff?.Invoke(head) == true ? Kestrel : path);
            }
        }

        return rows;
    }

    [Theory]
    [MemberData(nameof(OptionRows))]
    public Task Request_UnderEachOptionSet_GetsTheSameResponseFromTheExpectedPath(string set, string head, string path)
        => AssertSameAsync(set, head, path);

    /// <summary>Requests sent under the defaults, directly and through the standalone server's cleartext reactor.</summary>
    private static readonly (string Head, string Path)[] s_rows =
    [
        // What the fast path answers.
        ("GET /index.html?v=3&x=%20 HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=1, br;q=0.5\r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: zstd\r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: \r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity;q=0\r\n", FastPath),
        ("GET /img/a.png HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\", W/{etag}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\"\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\n", FastPath),
        ("HEAD /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: {lm}\r\n", FastPath),
        ("GET /docs/ HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET /large.bin HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("HEAD /large.bin HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nhost: x\r\nACCEPT-ENCODING: gzip\r\nconnection: keep-alive\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost:x\r\nX-Tabs:\t a\tb\t \r\nContent-Length: 0\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: [::1]:80\r\n", FastPath),
        // HTTP/1.0, as nginx's proxy_pass sends it by default: answered with HTTP/1.1 and
        // "Connection: close", then closed; with keep-alive, kept (the pipelines below).
        ("GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n", FastPath),
        ("HEAD /css/site.css HTTP/1.0\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n", FastPath),
        ("GET /index.html HTTP/1.0\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n", FastPath),
        ("GET /large.bin HTTP/1.0\r\nHost: x\r\n\r\n", FastPath),
        ("GET /index.html HTTP/1.0\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", FastPath),
        // One byte range (RFC 9110 §14): 206 with Content-Range, from memory or by sendfile; a
        // Range the middleware ignores gets the whole, as does a HEAD; a 304 comes first.
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=-100\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=3000-\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: BYTES=5-5\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99999\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,20-29\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=100-199, 0-149\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange:  bytes=1-2 \t\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: items=0-9\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=9-0\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes = 0-9\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: \r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,999999-\r\n", FastPath),
        ("HEAD /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-None-Match: {etag}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\"\r\nRange: bytes=0-9\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: {lm}\r\nRange: bytes=0-9\r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nRange: bytes=-5\r\n", FastPath),
        ("GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=100000-399999\r\n", FastPath),
        ("GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-20000\r\n", FastPath),
        ("GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=65530-65545\r\n", FastPath),
        ("GET /large.bin HTTP/1.0\r\nHost: x\r\nRange: bytes=500000-\r\n\r\n", FastPath),
        // If-Range (RFC 9110 §13.1.5): the range when it names the representation, else the whole.
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: {etag}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Range: {lm}\r\nRange: bytes=-9\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: \"other\"\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: W/{etag}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,2000-2009\r\nIf-Range: \"other\"\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Range: {etag}\r\n", FastPath),
        ("HEAD /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: {etag}\r\n", FastPath),
        ("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nRange: bytes=0-9\r\nIf-Range: {etag}\r\n", FastPath),
        // Several ranges, none satisfiable, a second Range line, If-Range, a long Range: Kestrel's.
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-0,-1\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=99999-\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=-0\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nRange: bytes=0-9\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: \r\nRange: bytes=0-9\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: Sat, 01 Jan 2000 00:00:00 GMT\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: \r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\nIf-Range: {etag}\r\nIf-Range: {etag}\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=" + string.Concat(Enumerable.Repeat("0-9,", 70)) + "0-9\r\n", Kestrel),
        ("GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99,200000-299999\r\n", Kestrel),
        // What needs the full stack.
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Match: \"other\"\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,2000-2009\r\nIf-Range: {etag}\r\n", Kestrel),
        ("GET /%69ndex.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /css/../index.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /big.bin HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("POST /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello", Kestrel),
        ("DELETE /index.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /index.html HTTP/1.0\r\n", Kestrel),
        ("GET /index.html HTTP/1.2\r\nHost: x\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n", Kestrel),
        // Malformed or unusual heads: Kestrel answers them, 400 or not.
        ("GET /index.html HTTP/1.1\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nHost: y\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost : x\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x:\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: :80\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost:\r\n", Kestrel),
        ("GET  /index.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /index.html  HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET\t/index.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("\r\nGET /index.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        // Line ends: a bare LF is a line end to Kestrel; a bare CR and a NUL are refused.
        ("GET /index.html HTTP/1.1\nHost: x\nConnection: close\n\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\nConnection: close\r\n\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\0b\r\n", Kestrel),
        ("GET /index\0.html HTTP/1.1\r\nHost: x\r\n", Kestrel),
        // Kestrel's limits (defaults: an 8 KiB request line, 100 fields, 32 KiB of fields): near
        // one, Kestrel answers (200); beyond it, Kestrel refuses (414, 431).
        ("GET /index.html?q={pad:8000} HTTP/1.1\r\nHost: x\r\n", FastPath),
        ("GET /index.html?q={pad:8150} HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /index.html?q={pad:8200} HTTP/1.1\r\nHost: x\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\n{fields:97}", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\n{fields:98}", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\n{fields:99}", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Pad: {pad:32600}\r\n", FastPath),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Pad: {pad:32700}\r\n", Kestrel),
        ("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Pad: {pad:32760}\r\n", Kestrel),
    ];

    public static TheoryData<string, string, string> Rows()
    {
        var rows = new TheoryData<string, string, string>();
        foreach (var set in (string[])["defaults", "reactor"])
        {
            foreach (var (head, path) in s_rows)
            {
                rows.Add(set, head, path);
            }
        }

        return rows;
    }

    [Theory]
    [MemberData(nameof(Rows))]
    public Task Request_GetsTheSameResponseFromTheExpectedPath(string set, string head, string path)
        => AssertSameAsync(set, head, path);

    /// <summary>Pipelines, with how many answers they get, and whether the connection ends up with Kestrel; each under the defaults and through the reactor.</summary>
    public static TheoryData<string, string, int, string> Pipelines()
    {
        var rows = new TheoryData<string, string, int, string>();
        foreach (var set in (string[])["defaults", "reactor"])
        {
            foreach (var (requests, answers, path) in s_pipelines)
            {
                rows.Add(set, requests, answers, path);
            }
        }

        return rows;
    }

    private static readonly (string Requests, int Answers, string Path)[] s_pipelines =
    [
        // The fast path answers the first three, lends the request for two ranges to Kestrel and
        // answers the rest.
        (
            "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-4,1000-1004\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            6,
            Kestrel
        ),
        // Ranges of a body held in memory, each in order, beside whole bodies.
        (
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-70000\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=-10\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=800000-\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=17-17\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=300000-320000\r\nConnection: close\r\n\r\n",
            6,
            FastPath
        ),
        // Bodies written in pieces, each in order.
        (
            "GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" +
            "HEAD /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            6,
            FastPath
        ),
        // HTTP/1.0 keeps the connection while each request asks for keep-alive: the third does
        // not, and the fourth is never answered.
        (
            "GET /index.html HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n\r\n" +
            "GET /large.bin HTTP/1.0\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n" +
            "GET /css/site.css HTTP/1.0\r\nHost: x\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n",
            3,
            FastPath
        ),
        // A tab before "close": Kestrel does not read it as close, keeps the connection open and
        // answers the next request (found by the fuzzer, seed 1, case 85340).
        (
            "GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: keep-alive,\t close\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            2,
            Kestrel
        ),
        // A bare LF after an answered request: Kestrel takes the rest, and answers it.
        (
            "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\n\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            3,
            Kestrel
        ),
    ];

    [Theory]
    [MemberData(nameof(Pipelines))]
    public async Task PipelinedRequests_AreAllAnsweredInOrder(string set, string requests, int answers, string path)
    {
        var pair = await hosts.For(set);

        var (plain, fast, handedOff) = await pair.ExchangeBothAsync(pair.Expand(requests));

        Assert.Equal(plain, fast);
        Assert.Equal(answers, fast.Split("HTTP/1.1 ").Length - 1);
        Assert.Equal(path, handedOff ? Kestrel : FastPath);
    }

    [Theory]
    [InlineData("defaults")]
    [InlineData("reactor")]
    public async Task ManyKeepAliveRequests_OnOneConnection_AreAllServedByTheFastPath(string set)
    {
        var pair = await hosts.For(set);
        using var client = new TcpClient();
        await client.ConnectAsync(pair.Fast.Address.Host, pair.Fast.Address.Port);
        var stream = client.GetStream();
        var request = Encoding.ASCII.GetBytes("GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n");
        var buffer = new byte[64 * 1024];
        for (var i = 0; i < 500; i++)
        {
            await stream.WriteAsync(request);
            var received = 0;
            while (received < 5000 + 100 && buffer.AsSpan(0, received).IndexOf("\r\n\r\n"u8) is var end && (end < 0 || received < end + 4 + 5000))
            {
                received += await stream.ReadAsync(buffer.AsMemory(received));
            }

            Assert.StartsWith("HTTP/1.1 200 OK", Encoding.ASCII.GetString(buffer, 0, 20));
        }

        Assert.False(pair.Recorder.TakeHandedOff(((IPEndPoint)client.Client.LocalEndPoint!).Port));
    }

    internal static async Task<byte[]> ExchangeAsync(PeregrineHost host, string request) => (await ExchangeWithPortAsync(host, request)).Response;

    /// <summary>The response stream with each head's lines sorted and its Date line removed.</summary>
    internal static string Normalise(byte[] raw)
    {
        var text = Encoding.Latin1.GetString(raw);
        var result = new StringBuilder();
        var at = 0;
        while (at < text.Length)
        {
            var end = text.IndexOf("\r\n\r\n", at, StringComparison.Ordinal);
            if (end < 0)
            {
                result.Append(text[at..]);
                break;
            }

            var lines = text[at..end].Split("\r\n");
            result.AppendLine(lines[0]);
            foreach (var line in lines.Skip(1).Where(l => !l.StartsWith("Date:", StringComparison.OrdinalIgnoreCase)).Order(StringComparer.Ordinal))
            {
                result.AppendLine(line);
            }

            at = end + 4;
            var length = lines.Skip(1).FirstOrDefault(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase));
            var bodyLength = length is null || lines[0].Contains(" 304 ") ? 0 : int.Parse(length[15..].Trim());

            // A HEAD response has a Content-Length but no body: the next bytes are the next head.
            if (bodyLength > 0 && text.AsSpan(at).StartsWith("HTTP/1.1 "))
            {
                bodyLength = 0;
            }

            var body = text.Substring(at, Math.Min(bodyLength, text.Length - at));
            result.Append("body ").Append(body.Length).Append(' ').AppendLine(Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(Encoding.Latin1.GetBytes(body))));
            at += body.Length;
        }

        return result.ToString();
    }

    internal static async Task<(byte[] Response, int ClientPort)> ExchangeWithPortAsync(PeregrineHost host, string request)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var port = ((IPEndPoint)client.Client.LocalEndPoint!).Port;
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.Latin1.GetBytes(request));
        using var response = new MemoryStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        try
        {
            await stream.CopyToAsync(response, timeout.Token);
        }
        catch (IOException)
        {
            // A reset after the response (Kestrel closing on a bad request) ends the stream too.
        }

        return (response.ToArray(), port);
    }

    private async Task AssertSameAsync(string set, string head, string path)
    {
        var pair = await hosts.For(set);
        var request = pair.Expand(head);
        if (!request.Contains("\r\n\r\n", StringComparison.Ordinal) && !request.Contains("\n\n", StringComparison.Ordinal))
        {
            request += "Connection: close\r\n\r\n";
        }

        var (plain, fast, handedOff) = await pair.ExchangeBothAsync(request);

        Assert.StartsWith("HTTP/1.1 ", plain);
        Assert.Equal(plain, fast);
        Assert.Equal(path, handedOff ? Kestrel : FastPath);
    }

    /// <param name="Base">The mount path the requests' paths start with.</param>
    /// <param name="HandsOff">Requests that go to Kestrel under these options whatever the row says.</param>
    /// <param name="Reactor">Whether the fast-path server reads its connections with the standalone server's cleartext reactor.</param>
    internal sealed record OptionSet(Action<PeregrineOptions> Configure, string Base = "", Func<string, bool>? HandsOff = null, bool Reactor = false);

    /// <summary>A pair of servers for each option set, started on first use; one tree for all.</summary>
    public sealed class Hosts : IAsyncLifetime
    {
        private readonly TempTree _tree = new();
        private readonly ConcurrentDictionary<string, Lazy<Task<OptionSetHosts>>> _pairs = new();

        public Task InitializeAsync()
        {
            _tree.Write("index.html", "<!doctype html><title>home</title>" + new string('x', 3000));
            _tree.Write("css/site.css", string.Concat(Enumerable.Repeat("body { color: #123456; }\n", 400)));
            _tree.Write("img/a.png", Enumerable.Range(0, 5000).Select(i => (byte)(i * 7)).ToArray());
            _tree.Write("docs/index.html", "docs");
            _tree.Write("big.bin", new byte[2 * 1024 * 1024]);

            // Held in memory (under MaxCachedFileSize) and larger than the fast path's body piece:
            // written in pieces, each distinct, so a piece out of order or repeated shows.
            _tree.Write("large.bin", Enumerable.Range(0, 900_000).Select(i => (byte)((i / 65536 * 37) + (i * 7))).ToArray());
            return Task.CompletedTask;
        }

        public async Task DisposeAsync()
        {
            foreach (var pair in _pairs.Values.Where(p => p.IsValueCreated))
            {
                await (await pair.Value).DisposeAsync();
            }

            _tree.Dispose();
        }

        internal Task<OptionSetHosts> For(string set) => _pairs.GetOrAdd(set, name => new(() => OptionSetHosts.StartAsync(_tree.Root, s_sets[name]))).Value;
    }

    /// <summary>The pair of servers for one option set, and how its rows are filled in and sent.</summary>
    internal sealed class OptionSetHosts(HostPair pair, string mount) : IAsyncDisposable
    {
        public HostPair Pair { get; } = pair;

        public PeregrineHost Fast => Pair.Fast;

        public HandOffRecorder Recorder => Pair.Recorder;

        public static async Task<OptionSetHosts> StartAsync(string root, OptionSet set)
            => new(await HostPair.StartAsync(root, set.Configure, set.Base + "/index.html", reactor: set.Reactor), set.Base);

        /// <summary>
        /// Fills in a row: <c>{base}</c> the mount path, <c>{etag}</c> and <c>{lm}</c> the
        /// validators of index.html, <c>{pad:N}</c> N bytes of padding, <c>{fields:N}</c> N
        /// header lines.
        /// </summary>
        public string Expand(string head)
        {
            var expanded = head.Replace("{base}", mount).Replace("{etag}", Pair.ETag).Replace("{lm}", Pair.LastModified);
            while (expanded.IndexOf("{pad:", StringComparison.Ordinal) is var at and >= 0)
            {
                var end = expanded.IndexOf('}', at);
                expanded = expanded[..at] + new string('a', int.Parse(expanded[(at + 5)..end])) + expanded[(end + 1)..];
            }

            while (expanded.IndexOf("{fields:", StringComparison.Ordinal) is var at and >= 0)
            {
                var end = expanded.IndexOf('}', at);
                var fields = string.Concat(Enumerable.Range(1, int.Parse(expanded[(at + 8)..end])).Select(i => $"X-Field-{i}: {i}\r\n"));
                expanded = expanded[..at] + fields + expanded[(end + 1)..];
            }

            return expanded;
        }

        /// <summary>The normalised answers of both servers, and whether the fast-path server handed the connection to Kestrel.</summary>
        public async Task<(string Plain, string Fast, bool HandedOff)> ExchangeBothAsync(string request)
        {
            var plain = await ExchangeWithPortAsync(Pair.Plain, request);
            var fast = await ExchangeWithPortAsync(Pair.Fast, request);
            return (Normalise(plain.Response), Normalise(fast.Response), Recorder.TakeHandedOff(fast.ClientPort));
        }

        public ValueTask DisposeAsync() => Pair.DisposeAsync();
    }
}
