using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Syntax;

/// <summary>
/// <c>UsePeregrine()</c> in an ordinary app (no fast path, Kestrel's options as they come)
/// refuses, for the paths it serves, what Kestrel lets through and RFC 9110/9112 refuse.
/// What Kestrel refuses itself before any middleware runs (an empty port, an absolute-form
/// target whose authority differs from Host) stays Kestrel's to answer.
/// </summary>
public sealed class LibraryRequestChecksTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost? _host;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _host = await PeregrineHost.StartAsync(_tree.Root);
    }

    public async Task DisposeAsync()
    {
        await _host!.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("GET", "/index.html", "[ab..cd::ef98:0:7654:321]", 400)]
    [InlineData("GET", "/index.html", "[::1]:80", 200)]
    [InlineData("GET", "/a/b%", "x", 400)]
    [InlineData("GET", "/a/b%1", "x", 400)]
    [InlineData("GET", "/a\u0001b", "x", 400)]
    [InlineData("GET", "/index.html#f", "x", 400)]
    [InlineData("GET", "/index.html?q=100%", "x", 200)]
    [InlineData("CONNECT", "/", "x", 400)]
    [InlineData("CONNECT", "/index.html", "x", 400)]
    [InlineData("CONNECT", "example.com:443", "example.com:443", 405)]
    [InlineData("CONNECT", "host", "host", 400)]
    // Kestrel's own 400s, before the pipeline.
    [InlineData("GET", "/index.html", "example.com:", 400)]
    [InlineData("GET", "http://example.com/index.html", "x", 400)]
    public async Task Request_UnderPeregrinesPaths_GetsTheRfcStatus(string method, string target, string host, int status)
    {
        var (actual, headers, _) = await RawHttp.SendAsync(_host!.Address, target, method, host: host);

        Assert.Equal(status, actual);
        if (status == 400)
        {
            Assert.Contains("Connection: close", headers, StringComparison.Ordinal);
        }
    }
}
