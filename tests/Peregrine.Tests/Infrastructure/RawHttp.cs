using System.Net.Sockets;
using System.Text;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// Sends a request line exactly as written. HttpClient normalises paths (it removes dot
/// segments and re-encodes), which would hide exactly the inputs the safety tests are about.
/// </summary>
public static class RawHttp
{
    /// <summary>Sends one request; <paramref name="host"/> replaces the Host header's value, which is the server's own by default.</summary>
    public static async Task<(int Status, string Headers, byte[] Body)> SendAsync(Uri server, string requestTarget, string method = "GET", string extraHeaders = "", string? host = null)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(server.Host, server.Port);
        var stream = client.GetStream();
        var request = $"{method} {requestTarget} HTTP/1.1\r\nHost: {host ?? $"{server.Host}:{server.Port}"}\r\nConnection: close\r\n{extraHeaders}\r\n";
        await stream.WriteAsync(Encoding.Latin1.GetBytes(request));
        using var response = new MemoryStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        await stream.CopyToAsync(response, timeout.Token);
        var bytes = response.ToArray();
        var split = bytes.AsSpan().IndexOf("\r\n\r\n"u8);
        var head = Encoding.Latin1.GetString(bytes, 0, split < 0 ? bytes.Length : split);
        var body = split < 0 ? [] : bytes[(split + 4)..];
        var status = int.Parse(head.AsSpan(9, 3));
        return (status, head, body);
    }

    /// <summary>Reads one response on a kept connection, its body framed by Content-Length, within a time bound.</summary>
    public static async Task<(int Status, string Head, byte[] Body)> ReadFramedResponseAsync(Stream stream)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var head = await ReadHeadAsync(stream, timeout.Token);
        var length = head.Split("\r\n").Single(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))[15..].Trim();
        var body = new byte[int.Parse(length)];
        await stream.ReadExactlyAsync(body, timeout.Token);
        return (int.Parse(head.AsSpan(9, 3)), head, body);
    }

    /// <summary>Reads a response head, up to and with its blank line, a byte at a time (nothing after it is taken).</summary>
    public static async Task<string> ReadHeadAsync(Stream stream, CancellationToken cancellationToken)
    {
        var head = new List<byte>();
        var one = new byte[1];
        while (head.Count < 4 || head[^4] != '\r' || head[^3] != '\n' || head[^2] != '\r' || head[^1] != '\n')
        {
            if (await stream.ReadAsync(one, cancellationToken) != 1)
            {
                throw new EndOfStreamException($"The connection ended after {head.Count} bytes of a response head.");
            }

            head.Add(one[0]);
        }

        return Encoding.ASCII.GetString([.. head]);
    }
}
