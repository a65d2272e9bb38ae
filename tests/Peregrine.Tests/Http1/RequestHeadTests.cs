using System.Text;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine.Http1;

namespace Peregrine.Tests.Http1;

/// <summary>
/// The fast path's request-head parser on hostile and unusual input: framing (where a head ends,
/// and whether it must go to Kestrel before it does), Kestrel's limits, and which heads it reads
/// itself. Every "no" here is a hand-off: Kestrel then answers with its own status.
/// </summary>
public sealed class RequestHeadTests
{
    private const string Get = "GET /index.html HTTP/1.1\r\nHost: x\r\n";

    // Small limits, so that the rows below can reach them: the fast path answers request lines
    // of up to 100 - 32 bytes, header sections of up to 200 - 32 bytes and 5 - 1 fields.
    private static readonly HeadLimits s_small = Limits(requestLine: 100, headersTotal: 200, headerCount: 5);

    [Theory]
    [InlineData(Get + "\r\n", "Complete")]
    [InlineData("HEAD / HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", "Complete")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\n", "Complete")]
    // Still arriving: nothing seen so far rules it out.
    [InlineData("", "Incomplete")]
    [InlineData("GET /index.ht", "Incomplete")]
    [InlineData("GET /index.html HTTP/1.1\r", "Incomplete")]
    [InlineData(Get, "Incomplete")]
    [InlineData(Get + "Accept: text/html", "Incomplete")]
    [InlineData(Get + "\r", "Incomplete")]
    [InlineData("GET /index.html HTTP/1.0\r\n", "Incomplete")]
    // A bare LF: Kestrel takes it as a line end and answers, so it is handed off as soon as seen.
    [InlineData("GET /index.html HTTP/1.1\nHost: x\n\n", "HandOff")]
    // Unfinished, with a line that sends the head to Kestrel: handed off at once, unless the head
    // is a connection's first and KestrelFront decides on it whole (see the _First test).
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\n", "HandOff")]
    [InlineData("CONNECT x:1 HTTP/1.1\r\n", "HandOff")]
    [InlineData("GET /index.html HTTP/1.1\n", "HandOff")]
    [InlineData(Get + "\n", "HandOff")]
    [InlineData(Get + "Accept: */*\n", "HandOff")]
    [InlineData(Get + "Accept: */*\nX: y\r\n\r\n", "HandOff")]
    // A bare CR, within a line or in place of the blank line.
    [InlineData("GET /index.html\rHTTP/1.1\r\n", "HandOff")]
    [InlineData(Get + "Accept: a\rb\r\n\r\n", "HandOff")]
    [InlineData(Get + "\r\r\n", "HandOff")]
    [InlineData(Get + "\rX", "HandOff")]
    // A NUL anywhere, even before the line is complete (Kestrel refuses it in the request line at once).
    [InlineData("GET /\0", "HandOff")]
    [InlineData(Get + "Accept: \0", "HandOff")]
    [InlineData(Get + "Accept: a\0b\r\n\r\n", "HandOff")]
    // Blank lines before the request: Kestrel skips them, and is left to.
    [InlineData("\r\n" + Get + "\r\n", "HandOff")]
    [InlineData("\r\n\r\n", "HandOff")]
    // Complete lines of an unfinished head that the fast path would not answer: Kestrel may be
    // refusing them already.
    [InlineData("POST /index.html HTTP/1.1\r\n", "HandOff")]
    [InlineData("GET /index.html HTTP/1.2\r\n", "HandOff")]
    [InlineData("GET /index.html HTTP/0.9\r\n", "HandOff")]
    [InlineData("GET  /index.html HTTP/1.1\r\n", "HandOff")]
    [InlineData(Get + "Bad Header: x\r\n", "HandOff")]
    [InlineData(Get + "Host : x\r\n", "HandOff")]
    [InlineData(Get + "X: a\r\n folded\r\n", "HandOff")]
    [InlineData(Get + "Content-Length: 0\r\nContent-Length: 0\r\n", "HandOff")]
    public void Find_Buffer_FramesOrHandsOff(string buffer, string expected)
    {
        var bytes = Encoding.Latin1.GetBytes(buffer);

        var framing = RequestHead.Find(bytes, Limits(), out var length, out _);

        Assert.Equal(expected, framing.ToString());
        Assert.Equal(expected == nameof(HeadFraming.Complete) ? buffer.IndexOf("\r\n\r\n", StringComparison.Ordinal) + 4 : 0, length);
    }

    [Theory]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\n", "Incomplete")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: example.com:\r\n", "Incomplete")]
    [InlineData("POST /index.html HTTP/1.1\r\nHost: example.com:\r\n", "Incomplete")]
    // No Host yet: the one to come may be rewritten, so the head is waited on whole, as
    // Kestrel waits for it before deciding; not where Kestrel refuses the request line at once.
    [InlineData("POST /index.html HTTP/1.1\r\n", "Incomplete")]
    [InlineData("GET /%2e%2e/a.txt HTTP/1.0\r\n", "Incomplete")]
    [InlineData("GET /%2e%2e/a.txt HTTP/1.0\r\nAccept: */*\r\nHost: a*b\r", "Incomplete")]
    [InlineData("POST /index.html HTTP/1.1\r\nHost: x\r\n", "HandOff")]
    [InlineData("POST /index.html HTTP/2.0\r\n", "HandOff")]
    [InlineData("POST http://x/index.html HTTP/1.1\r\n", "HandOff")]
    [InlineData("POST /index.html\u007f HTTP/1.1\r\n", "HandOff")]
    [InlineData("PO\"ST /index.html HTTP/1.1\r\n", "HandOff")]
    // A precondition is Kestrel's to answer, but the head may be lent to it whole: it is waited for.
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Match: \"a\"\r\n", "Incomplete")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n", "HandOff")]
    [InlineData("CONNECT x:1 HTTP/1.1\r\n", "Incomplete")]
    [InlineData("CONNECT x:1 HTTP/1.1\r\nHost: x\r\n", "Incomplete")]
    [InlineData("CONNECT x:1 HTTP/1.1\r\nBad Line\r\n", "HandOff")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\nX: a\u0001\r\n", "HandOff")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n", "HandOff")]
    public void Find_UnfinishedFirstHead_KestrelFrontDecidesWhole_IsWaitedOn(string buffer, string expected)
    {
        var framing = RequestHead.Find(Encoding.ASCII.GetBytes(buffer), Limits(), out _, out _, first: true);

        Assert.Equal(expected, framing.ToString());
    }

    [Theory]
    // The request line, CRLF included, answered up to MaxRequestLineSize - 32 bytes.
    [InlineData(60, true, "Complete")]
    [InlineData(68, true, "Complete")]
    [InlineData(69, true, "HandOff")]
    [InlineData(100, true, "HandOff")]
    [InlineData(101, true, "HandOff")]
    // Unfinished: handed off once it has taken the whole bound without ending.
    [InlineData(66, false, "Incomplete")]
    [InlineData(69, false, "Incomplete")]
    [InlineData(70, false, "HandOff")]
    [InlineData(500, false, "HandOff")]
    public void Find_RequestLineNearMaxRequestLineSize_IsHandedOff(int lineBytes, bool ended, string expected)
    {
        var line = "GET /index.html?q=" + new string('a', lineBytes - 18 - 11) + " HTTP/1.1\r\n";
        Assert.Equal(lineBytes, line.Length);
        var buffer = ended ? line + "Host: x\r\n\r\n" : line[..^2];

        var framing = RequestHead.Find(Encoding.ASCII.GetBytes(buffer), s_small, out _, out _);

        Assert.Equal(expected, framing.ToString());
    }

    [Theory]
    // Header lines and the blank line (not the request line) answered up to
    // MaxRequestHeadersTotalSize - 32 bytes; Kestrel allows MaxRequestHeadersTotalSize + 2.
    [InlineData(100, true, "Complete")]
    [InlineData(168, true, "Complete")]
    [InlineData(169, true, "HandOff")]
    [InlineData(202, true, "HandOff")]
    [InlineData(203, true, "HandOff")]
    // Unfinished: handed off once the fields have taken the whole bound without a blank line,
    // or one field line alone runs past it.
    [InlineData(166, false, "Incomplete")]
    [InlineData(169, false, "Incomplete")]
    [InlineData(170, false, "HandOff")]
    [InlineData(203, false, "HandOff")]
    public void Find_HeaderSectionNearMaxRequestHeadersTotalSize_IsHandedOff(int sectionBytes, bool ended, string expected)
    {
        var fields = "Host: x\r\nX-Pad: " + new string('p', sectionBytes - 9 - 9 - 2) + "\r\n";
        var buffer = "GET /index.html HTTP/1.1\r\n" + fields + (ended ? "\r\n" : "");
        Assert.Equal(sectionBytes, fields.Length + 2);

        var framing = RequestHead.Find(Encoding.ASCII.GetBytes(buffer), s_small, out _, out _);

        Assert.Equal(expected, framing.ToString());
    }

    [Theory]
    [InlineData(1, "Complete")]
    [InlineData(4, "Complete")]
    [InlineData(5, "HandOff")]
    [InlineData(6, "HandOff")]
    public void Find_FieldsNearMaxRequestHeaderCount_AreHandedOffAtTheLimit(int fields, string expected)
    {
        var buffer = "GET /index.html HTTP/1.1\r\nHost: x\r\n" + string.Concat(Enumerable.Range(1, fields - 1).Select(i => $"X-{i}: {i}\r\n")) + "\r\n";

        var framing = RequestHead.Find(Encoding.ASCII.GetBytes(buffer), s_small, out _, out _);

        Assert.Equal(expected, framing.ToString());
    }

    [Theory]
    [InlineData(1, 1, 1)]
    [InlineData(32, 32, 100)]
    [InlineData(8192, 32768, 1)]
    public void Find_LimitsBelowTheMargin_HandEverythingOff(int requestLine, int headersTotal, int headerCount)
    {
        var framing = RequestHead.Find(Encoding.ASCII.GetBytes(Get + "\r\n"), Limits(requestLine, headersTotal, headerCount), out _, out _);

        Assert.Equal(HeadFraming.HandOff, framing);
    }

    [Theory]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n", "/index.html", false, false)]
    [InlineData("HEAD /index.html HTTP/1.1\r\nHost: x\r\n\r\n", "/index.html", true, false)]
    [InlineData("GET / HTTP/1.1\r\nHost: x\r\n\r\n", "/", false, false)]
    [InlineData("GET /css/site.css?v=3&x=%20 HTTP/1.1\r\nHost: x\r\n\r\n", "/css/site.css", false, false)]
    [InlineData("GET /a?b?c/d HTTP/1.1\r\nHost: x\r\n\r\n", "/a", false, false)]
    [InlineData("GET /index.html HTTP/1.1\r\nhost: x\r\nconnection: CLOSE\r\n\r\n", "/index.html", false, true)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", "/index.html", false, true)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: \t,keep-alive ,\r\n\r\n", "/index.html", false, false)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost:x\r\nX-Tabs:\t\ta\tb \t\r\n\r\n", "/index.html", false, false)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", "/index.html", false, false)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Empty:\r\n\r\n", "/index.html", false, false)]
    public void Read_PlainHead_IsRead(string head, string path, bool isHead, bool close)
    {
        var read = Read(Encoding.ASCII.GetBytes(head), out var request);

        Assert.True(read);
        Assert.Equal(path, Encoding.ASCII.GetString(request.Path));
        Assert.Equal(isHead, request.IsHead);
        Assert.Equal(close, request.Close);
    }

    [Theory]
    [InlineData("GET /index.html HTTP/1.0\r\nHost: x\r\n\r\n", true, false, false)]
    [InlineData("HEAD /index.html HTTP/1.0\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n", true, true, false)]
    [InlineData("GET /index.html HTTP/1.0\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", true, true, true)]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", false, true, false)]
    public void Read_Version_AndConnectionOptions_AreRead(string head, bool http10, bool keepAlive, bool close)
    {
        Assert.True(Read(Encoding.ASCII.GetBytes(head), out var request));
        Assert.Equal(http10, request.Http10);
        Assert.Equal(keepAlive, request.KeepAlive);
        Assert.Equal(close, request.Close);
    }

    [Fact]
    public void Read_ConditionalAndNegotiatedHead_KeepsTheirValuesTrimmed()
    {
        var head = "GET /a HTTP/1.1\r\nHost: x\r\nAccept-Encoding:  br, gzip \r\nIf-None-Match: \"a\"\t\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\nOrigin: https://o\r\n\r\n"u8;

        Assert.True(Read(head, out var request));
        Assert.Equal("br, gzip", Encoding.ASCII.GetString(request.AcceptEncoding));
        Assert.Equal("\"a\"", Encoding.ASCII.GetString(request.IfNoneMatch));
        Assert.Equal("Sat, 01 Jan 2000 00:00:00 GMT", Encoding.ASCII.GetString(request.IfModifiedSince));
        Assert.True(request.HasOrigin);
    }

    [Fact]
    public void Read_OneRangeLine_IsKeptTrimmed_AndAnEmptyOneIsStillOne()
    {
        Assert.True(Read("GET /a HTTP/1.1\r\nHost: x\r\nrange: \tbytes=0-9, -5 \r\n\r\n"u8, out var request));
        Assert.True(request.HasRange);
        Assert.Equal("bytes=0-9, -5", Encoding.ASCII.GetString(request.Range));

        Assert.True(Read("GET /a HTTP/1.1\r\nHost: x\r\nRange:\r\n\r\n"u8, out request));
        Assert.True(request.HasRange);
        Assert.True(request.Range.IsEmpty);

        Assert.True(Read("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"u8, out request));
        Assert.False(request.HasRange);
    }

    [Fact]
    public void Read_OneIfRangeLine_IsKept()
    {
        Assert.True(Read("GET /a HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\nIf-Range:  \"a\" \r\n\r\n"u8, out var request));
        Assert.True(request.HasIfRange);
        Assert.Equal("\"a\"", Encoding.ASCII.GetString(request.IfRange));
    }

    [Fact]
    public void Read_EmptyAcceptEncoding_IsKeptAsIdentityOnly()
    {
        Assert.True(Read("GET /a HTTP/1.1\r\nHost: x\r\nAccept-Encoding:\r\n\r\n"u8, out var request));
        Assert.Equal(" ", Encoding.ASCII.GetString(request.AcceptEncoding));
    }

    [Theory]
    // Request line: method, spacing, target, version.
    [InlineData("POST /index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("get /index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html http/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.2\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.00\r\nHost: x\r\n\r\n")]
    // HTTP/1.0 without Host: Kestrel takes it (RFC 9112 §3.2 requires Host of HTTP/1.1 only), and
    // is left to.
    [InlineData("GET /index.html HTTP/1.0\r\n\r\n")]
    [InlineData("GET /index.html HTTP/2.0\r\nHost: x\r\n\r\n")]
    [InlineData("GET  /index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html  HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET\t/index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html\tHTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData(" GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1 \r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html\r\nHost: x\r\n\r\n")]
    [InlineData("GET HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET  HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET http://x/index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET * HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /%69ndex.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /css/../index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /./index.html HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /.env HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a\\b HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a#b HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a?b#c HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a?b c HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n")]
    [InlineData("GET /a?\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n")]
    // Line ends: TryParse frames nothing itself, and takes only CRLF.
    [InlineData("GET /index.html HTTP/1.1\nHost: x\n\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /index.html HTTP/1.1")]
    [InlineData("")]
    // Field names and white space: RFC 9112 §5.1 allows none between name and colon.
    [InlineData("GET /index.html HTTP/1.1\r\nHost : x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost\t: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX(y): z\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX-\u00e9: z\r\n\r\n")]
    // Obsolete line folding (RFC 9112 §5.2).
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n\tb\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\n Host: x\r\n\r\n")]
    // Field values: control characters, bare CR or LF, DEL, obs-text and UTF-8 go to Kestrel.
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\u0001b\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\nb\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\u007fb\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX: caf\u00e9\r\n\r\n")]
    // Host: exactly one, and one Kestrel accepts (HttpUtilities.IsHostHeaderValid).
    [InlineData("GET /index.html HTTP/1.1\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nHost: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost:\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x:\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: :80\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x:8o\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x:80:80\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x y\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x/y\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: user@x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::1\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [:1]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::g]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::1]x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::1]:\r\n\r\n")]
    // Host: one RFC 3986 refuses though Kestrel takes it (the pipeline's 400), or one RFC 3986
    // takes though Kestrel refuses it (KestrelFront's).
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [1:2:3:4:5:6:7:8:9]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [1::2::3]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::ffff:1.2.3.256]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [v7.abc]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: [::]\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: a*b\r\n\r\n")]
    // Fields that need the full stack, or a second copy of one the fast path reads.
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\nRange: bytes=0-1\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nRange:\r\nRange: bytes=0-1\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Range: \"a\"\r\nIf-Range: \"a\"\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Match: \"a\"\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Unmodified-Since: x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nHTTP2-Settings: AAA\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 00\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close;x\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: keep-alive,\t close\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\t,keep-alive\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\nAccept-Encoding: br\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: a\r\nIf-Modified-Since: b\r\n\r\n")]
    public void Read_HeadTheFastPathDoesNotAnswer_IsRefused(string head)
    {
        Assert.False(Read(Encoding.Latin1.GetBytes(head), out _));
    }

    [Theory]
    [InlineData("x")]
    [InlineData("example.com")]
    [InlineData("EXAMPLE.com:8080")]
    [InlineData("127.0.0.1:5000")]
    [InlineData("[::1]")]
    [InlineData("[::1]:443")]
    [InlineData("[fe80::1.2.3.4]")]
    public void Read_HostKestrelAccepts_IsRead(string host)
    {
        Assert.True(Read(Encoding.ASCII.GetBytes($"GET / HTTP/1.1\r\nHost: {host}\r\n\r\n"), out _));
    }

    [Theory]
    // RFC 9110 §5.6.2 tchar.
    [InlineData(RequestHead.Token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~")]
    // RFC 3986 unreserved, sub-delims, ':', '@' and '/'.
    [InlineData(RequestHead.PathChar, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/")]
    // Visible ASCII but '#'.
    [InlineData(RequestHead.QueryChar, "!\"$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~")]
    [InlineData(RequestHead.HostNameChar, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.")]
    [InlineData(RequestHead.Ipv6Char, "ABCDEFabcdef0123456789:.")]
    [InlineData(RequestHead.Digit, "0123456789")]
    public void Classes_HoldEachSetExactly(byte @class, string members)
    {
        for (var b = 0; b < 256; b++)
        {
            Assert.True(((RequestHead.Classes[b] & @class) != 0) == members.Contains((char)b), $"byte 0x{b:X2} in class {@class}");
        }
    }

    [Theory]
    // Answerable heads are lendable too.
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\n", true, true)]
    [InlineData("HEAD /a.txt?v=1 HTTP/1.0\r\nHost: x\r\nConnection: keep-alive\r\n", true, true)]
    // Kestrel's fields, with nothing that changes the framing: lent, whatever comes after them.
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\nHost: x\r\nAccept: */*\r\n", true, true)]
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\nHost: x\r\nRange: bytes=0-1\r\n", false, true)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nIf-Match: \"a\"\r\nIf-Range: \"a\"\r\nIf-Unmodified-Since: x\r\n", false, true)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"a\"\r\nIf-None-Match: \"b\"\r\n", false, true)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n", true, true)]
    // A body, an upgrade, an expectation, a transfer coding, an unknown connection option, a
    // field the fast path cannot read (after one that is Kestrel's), no Host or two, another
    // method, an encoded path: not lent.
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: keep-alive,\tclose\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\nHost: x\r\nBad Field: 1\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\nHost: x\r\nX: caf\u00e9\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nRange: bytes=0-1\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1\r\nHost: y\r\n", false, false)]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x:\r\n", false, false)]
    [InlineData("POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n", false, false)]
    [InlineData("GET /caf%C3%A9.txt HTTP/1.1\r\nHost: x\r\n", false, false)]
    public void Find_WholeHead_IsLendableOnlyWhenKestrelFramesItAlikeAndReadsANextHeadAfterIt(string lines, bool answerable, bool lendable)
    {
        var head = Encoding.Latin1.GetBytes(lines + "\r\n");

        Assert.Equal(HeadFraming.Complete, RequestHead.Find(head, Limits(), out var length, out var request));
        Assert.Equal(head.Length, length);
        Assert.Equal(answerable, request.IsAnswerable);
        Assert.Equal(lendable, request.IsLendable);
    }

    /// <summary>Frames and reads a whole head, as the fast path does.</summary>
    private static bool Read(ReadOnlySpan<byte> head, out RequestHead request)
        => RequestHead.Find(head, Limits(), out var length, out request) == HeadFraming.Complete && length == head.Length && request.IsAnswerable;

    private static HeadLimits Limits(int requestLine = 8 * 1024, int headersTotal = 32 * 1024, int headerCount = 100)
        => new(new KestrelServerLimits { MaxRequestLineSize = requestLine, MaxRequestHeadersTotalSize = headersTotal, MaxRequestHeaderCount = headerCount });
}
