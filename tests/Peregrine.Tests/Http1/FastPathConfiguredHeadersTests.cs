using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>
/// Headers that come from options reach fast-path responses as they reach the middleware's: CORS
/// for any origin on every response, Origin or not, and configured headers that replace a
/// built-in one (Cache-Control, Server) rather than doubling it.
/// </summary>
public sealed class FastPathConfiguredHeadersTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _plain = null!;
    private PeregrineHost _fast = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("app.js", string.Concat(Enumerable.Repeat("console.log('peregrine');\n", 200)));
        _tree.Write("img.png", Enumerable.Range(0, 4000).Select(i => (byte)(i * 13)).ToArray());
        void Configure(PeregrineOptions options)
        {
            options.CorsOrigins.Add("*");
            options.Headers["Cache-Control"] = "public, max-age=60";
            options.Headers["Server"] = "peregrine";
            options.Watch.Enabled = false;
        }

        _plain = await PeregrineHost.StartAsync(_tree.Root, Configure);
        _fast = await PeregrineHost.StartAsync(_tree.Root, Configure, fastPath: true);
        await _plain.Services.GetRequiredService<Compressor>().WhenIdle();
        await _fast.Services.GetRequiredService<Compressor>().WhenIdle();
    }

    public async Task DisposeAsync()
    {
        await _plain.DisposeAsync();
        await _fast.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("GET /app.js HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    [InlineData("GET /app.js HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\nConnection: close\r\n\r\n")]
    [InlineData("GET /img.png HTTP/1.1\r\nHost: x\r\nOrigin: https://example.com\r\nConnection: close\r\n\r\n")]
    [InlineData("HEAD /img.png HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    public async Task Request_GetsTheSameHeadersWithAndWithoutTheFastPath(string request)
    {
        var plain = FastPathDifferentialTests.Normalise(await FastPathDifferentialTests.ExchangeAsync(_plain, request));
        var fast = FastPathDifferentialTests.Normalise(await FastPathDifferentialTests.ExchangeAsync(_fast, request));

        Assert.Equal(plain, fast);
        Assert.Contains("Access-Control-Allow-Origin: *", fast);
        Assert.Single(fast.Split('\n'), line => line.StartsWith("Cache-Control:", StringComparison.OrdinalIgnoreCase));
        Assert.Single(fast.Split('\n'), line => line.StartsWith("Server:", StringComparison.OrdinalIgnoreCase));
    }
}
