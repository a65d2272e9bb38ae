using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Catalog;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.FastPath;

/// <summary>
/// The fast path answers exactly as the middleware does: the same request, byte for byte, to a
/// server with the fast path and to one without, gets the same status, the same headers (but
/// Date, and in any order) and the same body. Requests the fast path does not take must reach
/// Kestrel intact, including in the middle of a pipelined connection.
/// </summary>
public sealed class FastPathDifferentialTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _plain = null!;
    private PeregrineHost _fast = null!;
    private string _etag = "";
    private string _lastModified = "";

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "<!doctype html><title>home</title>" + new string('x', 3000));
        _tree.Write("css/site.css", string.Concat(Enumerable.Repeat("body { color: #123456; }\n", 400)));
        _tree.Write("img/a.png", Enumerable.Range(0, 5000).Select(i => (byte)(i * 7)).ToArray());
        _tree.Write("docs/index.html", "docs");
        _tree.Write("big.bin", new byte[2 * 1024 * 1024]);

        // Held in memory (under MaxCachedFileSize) and larger than the fast path's body piece:
        // written in pieces, each distinct, so a piece out of order or repeated shows.
        _tree.Write("large.bin", Enumerable.Range(0, 900_000).Select(i => (byte)((i / 65536 * 37) + (i * 7))).ToArray());
        void Configure(PeregrineOptions options)
        {
            options.Headers["X-Content-Type-Options"] = "nosniff";
            options.Watch.Enabled = false;
        }

        _plain = await PeregrineHost.StartAsync(_tree.Root, Configure);
        _fast = await PeregrineHost.StartAsync(_tree.Root, Configure, fastPath: true);
        await _plain.Services.GetRequiredService<FileCatalog>().Compressor!.WhenIdle();
        await _fast.Services.GetRequiredService<FileCatalog>().Compressor!.WhenIdle();
        using var response = await _plain.Client.GetAsync("/index.html");
        _etag = response.Headers.ETag!.Tag;
        _lastModified = response.Content.Headers.LastModified!.Value.ToString("r");
    }

    public async Task DisposeAsync()
    {
        await _plain.DisposeAsync();
        await _fast.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("HEAD /index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /index.html?v=3&x=%20 HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br, gzip\r\n")]
    [InlineData("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=1, br;q=0.5\r\n")]
    [InlineData("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: zstd\r\n")]
    [InlineData("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: \r\n")]
    [InlineData("GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity;q=0\r\n")]
    [InlineData("GET /img/a.png HTTP/1.1\r\nHost: x\r\nAccept-Encoding: br\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\", W/{etag}\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"other\"\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: *\r\n")]
    [InlineData("HEAD /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: {lm}\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sat, 01 Jan 2000 00:00:00 GMT\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nIf-Match: \"other\"\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9,20-29\r\nIf-Range: {etag}\r\n")]
    [InlineData("GET /missing.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /docs HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /docs/ HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET / HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /%69ndex.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /css/../index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /big.bin HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /large.bin HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("HEAD /large.bin HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("POST /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 5\r\n\r\nhello")]
    [InlineData("DELETE /index.html HTTP/1.1\r\nHost: x\r\n")]
    [InlineData("GET /index.html HTTP/1.0\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nHost: y\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nX-Folded: a\r\n b\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nBad Header: x\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n")]
    [InlineData("GET /index.html HTTP/1.1\r\nhost: x\r\nACCEPT-ENCODING: gzip\r\nconnection: keep-alive\r\n")]
    public async Task Request_GetsTheSameResponseWithAndWithoutTheFastPath(string head)
    {
        var request = Expand(head);
        if (!request.Contains("\r\n\r\n"))
        {
            request += "Connection: close\r\n\r\n";
        }

        var plain = Normalise(await ExchangeAsync(_plain, request));
        var fast = Normalise(await ExchangeAsync(_fast, request));

        Assert.Equal(plain, fast);
    }

    [Fact]
    public async Task PipelinedRequests_MixingFastAndHandedOff_AreAllAnsweredInOrder()
    {
        var request = Expand(
            "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /css/site.css HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nRange: bytes=0-4\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

        var plain = Normalise(await ExchangeAsync(_plain, request));
        var fast = Normalise(await ExchangeAsync(_fast, request));

        Assert.Equal(plain, fast);
        Assert.Equal(6, fast.Split("HTTP/1.1 ").Length - 1);
    }

    [Fact]
    public async Task PipelinedRequests_ForBodiesWrittenInPieces_AreAllAnsweredInOrder()
    {
        var request = Expand(
            "GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" +
            "HEAD /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /img/a.png HTTP/1.1\r\nHost: x\r\n\r\n" +
            "GET /large.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");

        var plain = Normalise(await ExchangeAsync(_plain, request));
        var fast = Normalise(await ExchangeAsync(_fast, request));

        Assert.Equal(plain, fast);
        Assert.Equal(6, fast.Split("HTTP/1.1 200 OK").Length - 1);
    }

    [Fact]
    public async Task ManyKeepAliveRequests_OnOneConnection_AreAllServed()
    {
        using var client = new TcpClient();
        await client.ConnectAsync(_fast.Address.Host, _fast.Address.Port);
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
    }

    private string Expand(string head) => head.Replace("{etag}", _etag).Replace("{lm}", _lastModified);

    internal static async Task<byte[]> ExchangeAsync(PeregrineHost host, string request)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
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

        return response.ToArray();
    }

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
}
