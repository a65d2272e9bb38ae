using System.Net;
using System.Net.Sockets;

namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// What a server did with one connection's bytes: the status of each response, in order, and
/// how the connection stood at the end: closed (FIN or reset), or open with nothing more
/// arriving within the quiet period. No response and open is "no answer": the server is waiting.
/// </summary>
internal readonly record struct ConnectionOutcome(string Statuses, bool Closed)
{
    private const int MaxBytes = 4 * 1024 * 1024;

    public bool Answered => Statuses.Length != 0;

    public override string ToString() => (Answered ? Statuses : "no answer") + (Closed ? ", closed" : ", open");

    /// <summary>Sends a case's bytes as planned and reads until the server closes or falls quiet.</summary>
    public static async Task<(ConnectionOutcome Outcome, int ClientPort)> ExchangeAsync(Uri server, FuzzCase fuzzCase, TimeSpan quiet)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        await socket.ConnectAsync(IPAddress.Loopback, server.Port);
        var port = ((IPEndPoint)socket.LocalEndPoint!).Port;

        // Read while writing: a server that answers and closes early must have its answer read
        // before later writes meet the closed socket.
        var writing = WriteAsync(socket, fuzzCase);
        var reading = ReadAsync(socket, writing, quiet);
        await writing;
        var (received, closed) = await reading;
        return (new ConnectionOutcome(StatusesOf(received), closed), port);
    }

    private static async Task WriteAsync(Socket socket, FuzzCase fuzzCase)
    {
        try
        {
            var from = 0;
            foreach (var to in fuzzCase.Splits.Append(fuzzCase.Bytes.Length))
            {
                if (from != 0)
                {
                    await Task.Delay(FuzzCase.SplitDelay);
                }

                await socket.SendAsync(fuzzCase.Bytes.AsMemory(from, to - from));
                from = to;
            }
        }
        catch (SocketException)
        {
            // The server closed the connection before all was sent: what it answered is read.
        }
    }

    private static async Task<(byte[] Received, bool Closed)> ReadAsync(Socket socket, Task writing, TimeSpan quiet)
    {
        var buffer = new byte[MaxBytes];
        var received = 0;
        try
        {
            while (received < buffer.Length)
            {
                // The quiet period runs from the last byte received, and not before all is written.
                using var silence = new CancellationTokenSource();
                var receive = socket.ReceiveAsync(buffer.AsMemory(received), SocketFlags.None, silence.Token).AsTask();
                if (!writing.IsCompleted)
                {
                    await Task.WhenAny(receive, writing);
                }

                if (!receive.IsCompleted)
                {
                    silence.CancelAfter(quiet);
                }

                var read = await receive;
                if (read == 0)
                {
                    return (buffer[..received], true);
                }

                received += read;
            }
        }
        catch (OperationCanceledException)
        {
            return (buffer[..received], false);
        }
        catch (SocketException)
        {
            return (buffer[..received], true);
        }

        return (buffer[..received], false);
    }

    /// <summary>The status codes of the responses in <paramref name="data"/>, space-separated; a head cut short shows as its status and "…".</summary>
    private static string StatusesOf(ReadOnlySpan<byte> data)
    {
        var statuses = new List<string>();
        while (!data.IsEmpty)
        {
            var end = data.IndexOf("\r\n\r\n"u8);
            if (!data.StartsWith("HTTP/1.1 "u8) || data.Length < 12)
            {
                statuses.Add("garbage");
                break;
            }

            var status = System.Text.Encoding.ASCII.GetString(data[9..12]);
            if (end < 0)
            {
                statuses.Add(status + "…");
                break;
            }

            statuses.Add(status);
            var head = System.Text.Encoding.Latin1.GetString(data[..end]);
            data = data[(end + 4)..];
            var length = head.Split("\r\n").FirstOrDefault(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase)) is { } line
                ? int.Parse(line.AsSpan(15).Trim())
                : 0;

            // No body on a 304, nor on the answer to a HEAD: then the next bytes are the next head.
            if (status == "304" || data.StartsWith("HTTP/1.1 "u8))
            {
                length = 0;
            }

            data = data[Math.Min(length, data.Length)..];
        }

        return string.Join(' ', statuses);
    }
}
