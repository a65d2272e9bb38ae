using System.Text;
using Peregrine.Syntax;

namespace Peregrine.Tests.Syntax;

public sealed class HostSyntaxTests
{
    [Theory]
    [InlineData("", "Accepted")]
    [InlineData("localhost", "Accepted")]
    [InlineData("localhost:8080", "Accepted")]
    [InlineData("127.0.0.1:80", "Accepted")]
    [InlineData("a-b.example_~!$&'()", "Accepted")]
    [InlineData("[::1]", "Accepted")]
    [InlineData("[::1]:8080", "Accepted")]
    [InlineData("[2001:db8::7]", "Accepted")]
    [InlineData("[1:2:3:4:5:6:7:8]", "Accepted")]
    [InlineData("[1:2:3:4:5:6::]", "Accepted")]
    [InlineData("[1:2:3:4:5:6:7::]", "Accepted")]
    [InlineData("[::2:3:4:5:6:7:8]", "Accepted")]
    [InlineData("[::ffff:192.0.2.1]", "Accepted")]
    [InlineData("[1:2:3:4:5:6:192.0.2.1]", "Accepted")]
    [InlineData("[FE80::ABCD]", "Accepted")]
    // Valid, refused by Kestrel: an empty port (RFC 3986 §3.2.3 port = *DIGIT) ...
    [InlineData("example.com:", "EmptyPort")]
    [InlineData("[::1]:", "EmptyPort")]
    // ... IPvFuture, "[::]", sub-delims and percent-encoding in a reg-name.
    [InlineData("[v7.abc]", "Unaccepted")]
    [InlineData("[V1F.a:b+c]:80", "Unaccepted")]
    [InlineData("[v7.abc]:", "Unaccepted")]
    [InlineData("[::]", "Unaccepted")]
    [InlineData("a*b", "Unaccepted")]
    [InlineData("a+b,c;d=e", "Unaccepted")]
    [InlineData("a%41b", "Unaccepted")]
    [InlineData("a%41b:", "Unaccepted")]
    // Not valid.
    [InlineData("[ab..cd::ef98:0:7654:321]", "Invalid")]
    [InlineData("[1:2:3:4:5:6:7:8:9]", "Invalid")]
    [InlineData("[1:2:3:4:5:6:7]", "Invalid")]
    [InlineData("[1::2::3]", "Invalid")]
    [InlineData("[:1::2]", "Invalid")]
    [InlineData("[1::2:]", "Invalid")]
    [InlineData("[12345::]", "Invalid")]
    [InlineData("[::ffff:192.0.2.256]", "Invalid")]
    [InlineData("[::ffff:192.0.02.1]", "Invalid")]
    [InlineData("[::ffff:192.0.2]", "Invalid")]
    [InlineData("[1.2.3.4]", "Invalid")]
    [InlineData("[]", "Invalid")]
    [InlineData("[::1", "Invalid")]
    [InlineData("[::1]x", "Invalid")]
    [InlineData("[::1]:8o", "Invalid")]
    [InlineData("[v7.]", "Invalid")]
    [InlineData("[v.abc]", "Invalid")]
    [InlineData("[vg.abc]", "Invalid")]
    [InlineData("[v7.a/b]", "Invalid")]
    [InlineData(":80", "Invalid")]
    [InlineData("x:8o", "Invalid")]
    [InlineData("x:80:80", "Invalid")]
    [InlineData("a b", "Invalid")]
    [InlineData("a/b", "Invalid")]
    [InlineData("a@b", "Invalid")]
    [InlineData("a%4", "Invalid")]
    [InlineData("a%zz", "Invalid")]
    [InlineData("caf\u00e9", "Invalid")]
    public void Host_IsClassified_AsRfc3986AndKestrelTakeIt(string value, string expected)
    {
        var form = Enum.Parse<HostForm>(expected);
        Assert.Equal(form, HostSyntax.Classify(value.AsSpan()));
        Assert.Equal(form, HostSyntax.Classify<byte>(Encoding.UTF8.GetBytes(value)));
    }

    [Theory]
    [InlineData("example.com:443", true)]
    [InlineData("[::1]:443", true)]
    [InlineData("[v7.abc]:1", true)]
    [InlineData("example.com", false)]
    [InlineData("example.com:", false)]
    [InlineData("[::1]", false)]
    [InlineData("/", false)]
    [InlineData(":443", false)]
    [InlineData("http://example.com:443", false)]
    public void ConnectTarget_IsAuthorityForm_OnlyWithHostAndPort(string target, bool authorityForm)
        => Assert.Equal(authorityForm, HostSyntax.IsAuthorityForm(target.AsSpan()));

    // RFC 3986 §2.3 unreserved, §2.2 sub-delims, and the five of those Kestrel refuses
    // (HttpUtilities.IsHostHeaderValid, as Http.Sys).
    private const string Unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
    private const string SubDelims = "!$&'()*+,;=";
    private const string KestrelRefuses = "*+,;=";

    [Fact]
    public void EveryCharacter_InARegNameAndAnIPvFuture_IsClassifiedAsRfc3986Says()
    {
        for (var c = 0; c < 0x3000; c = c < 0x100 ? c + 1 : c + 0x101)
        {
            var ch = (char)c;
            var valid = Unreserved.Contains(ch) || SubDelims.Contains(ch);
            var expected = !valid ? HostForm.Invalid : KestrelRefuses.Contains(ch) ? HostForm.Unaccepted : HostForm.Accepted;
            if (ch is ':' or '[' or '%')
            {
                // A port separator, a literal's start, or a pct-encoding's (tested above).
                continue;
            }

            var host = $"a{ch}b";
            Assert.True(expected == HostSyntax.Classify(host.AsSpan()), $"U+{c:X4} in a reg-name: {HostSyntax.Classify(host.AsSpan())}, not {expected}");
            if (c < 0x100)
            {
                Assert.Equal(expected, HostSyntax.Classify<byte>([(byte)'a', (byte)c, (byte)'b']));
            }

            var future = $"[v7.a{ch}b]";
            var futureExpected = valid && ch != ']' ? HostForm.Unaccepted : HostForm.Invalid;
            Assert.True(futureExpected == HostSyntax.Classify(future.AsSpan()), $"U+{c:X4} in an IPvFuture: {HostSyntax.Classify(future.AsSpan())}, not {futureExpected}");
        }
    }
}
