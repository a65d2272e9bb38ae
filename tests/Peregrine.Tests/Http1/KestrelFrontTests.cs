using System.Text;
using Peregrine.Http1;

namespace Peregrine.Tests.Http1;

public sealed class KestrelFrontTests
{
    [Theory]
    // An empty port is dropped (RFC 3986 §6.2.3); the other forms Kestrel refuses are emptied.
    [InlineData("GET /a HTTP/1.1\r\nHost: example.com:\r\nAccept: */*\r\n\r\n", "GET /a HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\nConnection: close\r\n\r\n")]
    [InlineData("GET /a HTTP/1.1\r\nhost:\t[::1]: \r\n\r\n", "GET /a HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n")]
    [InlineData("POST /a HTTP/1.1\r\nContent-Length: 3\r\nHost: [v7.abc]\r\n\r\n", "POST /a HTTP/1.1\r\nContent-Length: 3\r\nHost: \r\nConnection: close\r\n\r\n")]
    [InlineData("HEAD /a HTTP/1.0\r\nHost: a*b:80\r\nConnection: keep-alive\r\n\r\n", "HEAD /a HTTP/1.0\r\nHost: \r\nConnection: keep-alive\r\nConnection: close\r\n\r\n")]
    public void FirstHead_WithAValidHostKestrelRefuses_IsRewrittenToCloseAfterIt(string head, string expected)
    {
        var action = KestrelFront.Decide(Encoding.ASCII.GetBytes(head), out var rewritten);

        Assert.Equal(FrontAction.Rewrite, action);
        Assert.Equal(expected, Encoding.ASCII.GetString(rewritten!));
    }

    [Theory]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n", "RefuseConnect")]
    [InlineData("CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", "RefuseConnect")]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:\r\n\r\n", "RefuseConnect")]
    // Left to Kestrel and the pipeline: their 400s.
    [InlineData("CONNECT / HTTP/1.1\r\nHost: x\r\n\r\n", "None")]
    [InlineData("CONNECT host HTTP/1.1\r\nHost: host\r\n\r\n", "None")]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\n\r\n", "None")]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "None")]
    [InlineData("CONNECT example.com:443 HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n\r\n", "None")]
    [InlineData("GET /a HTTP/1.1\r\nHost: [ab..cd::ef98:0:7654:321]\r\n\r\n", "None")]
    [InlineData("GET /a HTTP/1.1\r\nHost: x\r\n\r\n", "None")]
    [InlineData("GET /a HTTP/1.1\r\nHost: x:\r\nHost: x:\r\n\r\n", "None")]
    [InlineData("GET /a HTTP/1.1\r\nHost: x:\r\nBad Line\r\n\r\n", "None")]
    [InlineData("GET /a HTTP/2.0\r\nHost: x:\r\n\r\n", "None")]
    // Absolute-form: Host against the authority is Kestrel's (AllowHostHeaderOverride).
    [InlineData("GET http://x/a HTTP/1.1\r\nHost: x:\r\n\r\n", "None")]
    public void FirstHead_IsAnsweredRewrittenOrLeftToKestrel(string head, string expected)
    {
        var action = KestrelFront.Decide(Encoding.ASCII.GetBytes(head), out var rewritten);

        Assert.Equal(expected, action.ToString());
        Assert.Equal(action == FrontAction.Rewrite, rewritten is not null);
    }
}
