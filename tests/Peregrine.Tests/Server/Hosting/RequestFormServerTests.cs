using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// The standalone server answers Host, request-target and CONNECT as RFC 9110/9112 say, with
/// the fast path and without it (<c>--no-fast-path</c>, which also stands for
/// <c>--access-log</c> and <c>--auth</c>, the other settings that turn it off). Which path
/// answered each is pinned by RequestFormTests.
/// </summary>
public sealed class RequestFormServerTests
{
    public static TheoryData<string, string, string, string, int> Rows()
    {
        (string Method, string Target, string Host, int Status)[] rows =
        [
            ("GET", "http://example.com/index.html", "localhost", 200),
            ("GET", "/index.html", "[ab..cd::ef98:0:7654:321]", 400),
            ("GET", "/index.html", "example.com:", 200),
            ("GET", "/index.html", "[v7.abc]", 200),
            ("GET", "/a/b%", "x", 400),
            ("GET", "/a/b%1", "x", 400),
            ("GET", "/a\u0001b", "x", 400),
            ("GET", "/index.html#f", "x", 400),
            ("CONNECT", "example.com:443", "localhost", 405),
            ("CONNECT", "/", "x", 400),
            ("CONNECT", "host", "host", 400),
            ("GET", "/healthz", "[ab..cd::ef98:0:7654:321]", 400),
        ];
        var data = new TheoryData<string, string, string, string, int>();
        foreach (var path in new[] { "fast path", "--no-fast-path" })
        {
            foreach (var (method, target, host, status) in rows)
            {
                data.Add(path, method, target, host, status);
            }
        }

        return data;
    }

    [Theory]
    [MemberData(nameof(Rows))]
    public async Task Request_GetsTheRfcStatus_OnEitherPath(string path, string method, string target, string host, int status)
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        await using var server = await RunningServer.StartAsync(path == "fast path" ? [tree.Root] : [tree.Root, "--no-fast-path"]);

        var (actual, headers, _) = await RawHttp.SendAsync(server.Address, target, method, host: host);

        Assert.Equal(status, actual);
        if (status == 405)
        {
            Assert.Contains("Allow: GET, HEAD", headers, StringComparison.Ordinal);
        }
    }
}
