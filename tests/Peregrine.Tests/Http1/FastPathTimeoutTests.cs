using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>
/// A head that begins and does not finish within Kestrel's RequestHeadersTimeout gets Kestrel's
/// answer, a 408 and a closed connection, whichever path holds the connection.
/// </summary>
public sealed class FastPathTimeoutTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _plain = null!;
    private PeregrineHost _fast = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "<!doctype html><title>home</title>");
        void Configure(PeregrineOptions options) => options.Watch.Enabled = false;
        void Limits(Microsoft.AspNetCore.Server.Kestrel.Core.KestrelServerOptions kestrel) => kestrel.Limits.RequestHeadersTimeout = TimeSpan.FromSeconds(1);
        _plain = await PeregrineHost.StartAsync(_tree.Root, Configure, kestrel: Limits);
        _fast = await PeregrineHost.StartAsync(_tree.Root, Configure, fastPath: true, kestrel: Limits);
    }

    public async Task DisposeAsync()
    {
        await _plain.DisposeAsync();
        await _fast.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /index.html HTTP/1.1\r\nHo")]
    public async Task UnfinishedHead_AfterTheHeadersTimeout_Gets408AndTheConnectionCloses(string sent)
    {
        var plain = await SendAndReadToCloseAsync(_plain.Address, sent);
        var fast = await SendAndReadToCloseAsync(_fast.Address, sent);

        Assert.True(StatusLines(plain).EndsWith("HTTP/1.1 408", StringComparison.Ordinal), plain);
        Assert.Equal(StatusLines(plain), StatusLines(fast));
    }

    private static string StatusLines(string responses)
        => string.Join(" | ", System.Text.RegularExpressions.Regex.Matches(responses, @"HTTP/1\.1 \d{3}").Select(m => m.Value));

    /// <summary>Sends the bytes and reads until the server closes, within 10 s (a hang fails).</summary>
    private static async Task<string> SendAndReadToCloseAsync(Uri server, string sent)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(server.Host, server.Port);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(sent));
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        using var received = new MemoryStream();
        await stream.CopyToAsync(received, timeout.Token);
        return Encoding.ASCII.GetString(received.ToArray());
    }
}
