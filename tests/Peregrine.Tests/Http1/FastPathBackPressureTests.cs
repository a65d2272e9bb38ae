using System.Diagnostics.Metrics;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Metrics;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>
/// A client that pipelines requests and does not read the responses must cost the server
/// neither unbounded memory nor a connection held for ever: responses are made only as fast as
/// the client takes them, and once Kestrel's minimum response data rate runs out the connection
/// is closed, as Kestrel closes its own.
/// </summary>
public sealed class FastPathBackPressureTests
{
    private const int FileLength = 900_000;
    private const int Requests = 100;

    public static TheoryData<string> Rates => new() { "default", "none", "extreme" };

    [Fact]
    public async Task PipelinedByteRanges_ToAClientThatStalls_ArriveWholeFromTheirOffsets()
    {
        using var tree = new TempTree();
        var content = Enumerable.Range(0, FileLength).Select(i => (byte)((i % 251) ^ (i >> 12))).ToArray();
        tree.Write("large.bin", content);
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.Watch.Enabled = false, fastPath: true);
        using var client = new TcpClient { ReceiveBufferSize = 16 * 1024 };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();

        // Slices that start and end away from any block boundary; the socket fills with the
        // first few, and the rest wait for it (sent from the body's offset once it has room).
        var ranges = Enumerable.Range(0, 20).Select(i => (First: 1_000 + (i * 35_001), Last: 1_000 + (i * 35_001) + 200_000 + i)).ToArray();
        var request = string.Concat(ranges.Select((r, i) => $"GET /large.bin HTTP/1.1\r\nHost: x\r\nRange: bytes={r.First}-{r.Last}\r\n{(i == ranges.Length - 1 ? "Connection: close\r\n" : "")}\r\n"));
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request));
        await Task.Delay(TimeSpan.FromSeconds(0.5));

        using var all = new MemoryStream();
        await stream.CopyToAsync(all);
        var text = all.ToArray();
        var at = 0;
        foreach (var (first, last) in ranges)
        {
            var end = text.AsSpan(at).IndexOf("\r\n\r\n"u8);
            var head = Encoding.ASCII.GetString(text, at, end);
            Assert.StartsWith("HTTP/1.1 206 Partial Content\r\n", head);
            Assert.Contains($"\r\nContent-Range: bytes {first}-{last}/{FileLength}\r\n", head);
            at += end + 4;
            Assert.True(text.AsSpan(at, last - first + 1).SequenceEqual(content.AsSpan(first, last - first + 1)), $"range {first}-{last}");
            at += last - first + 1;
        }

        Assert.Equal(text.Length, at);
    }

    [Theory]
    [MemberData(nameof(Rates))]
    public async Task PipelinedRequests_AreAnsweredOnlyAsFastAsTheClientReads(string rate)
    {
        using var tree = new TempTree();
        var content = Enumerable.Range(0, FileLength).Select(i => (byte)(i % 251)).ToArray();
        tree.Write("large.bin", content);

        // Kestrel's default minimum (240 B/s, 5 s grace), none at all, and the most lenient one
        // Kestrel accepts, whose deadline lies beyond what a TimeSpan can hold.
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.Watch.Enabled = false, fastPath: true, kestrel: k =>
        {
            if (rate != "default")
            {
                k.Limits.MinResponseDataRate = rate == "none" ? null : new MinDataRate(bytesPerSecond: 1, gracePeriod: TimeSpan.MaxValue);
            }
        });
        long served = 0;
        using var listener = new MeterListener();
        var meter = host.Services.GetRequiredService<PeregrineMetrics>().Meter;
        listener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter == meter && instrument.Name == "peregrine.requests")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        listener.SetMeasurementEventCallback<long>((_, value, _, _) => Interlocked.Add(ref served, value));
        listener.Start();
        using var client = new TcpClient { ReceiveBufferSize = 16 * 1024 };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();
        var request = string.Concat(Enumerable.Repeat("GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n", Requests - 1)) + "GET /large.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request));

        // Not reading: what the kernel's socket buffers take (a few MB) plus one batch in the
        // pipe is answered; the other 90-odd responses are not made, so not held in memory.
        await Task.Delay(TimeSpan.FromSeconds(1.5));
        var answeredWhileStalled = Interlocked.Read(ref served);

        using var all = new MemoryStream();
        await stream.CopyToAsync(all);
        Assert.InRange(answeredWhileStalled, 1, 20);
        Assert.Equal(Requests, Interlocked.Read(ref served));
        var text = all.ToArray();
        var at = 0;
        for (var i = 0; i < Requests; i++)
        {
            var end = text.AsSpan(at).IndexOf("\r\n\r\n"u8);
            Assert.StartsWith("HTTP/1.1 200 OK", Encoding.ASCII.GetString(text, at, 15));
            at += end + 4;
            Assert.True(text.AsSpan(at, FileLength).SequenceEqual(content), $"body {i}");
            at += FileLength;
        }

        Assert.Equal(text.Length, at);
    }

    [Fact]
    public async Task AClientThatNeverReadsAgain_HasItsConnectionClosed()
    {
        // Returning from the connection is not enough: Kestrel's transport would go on trying
        // to send what waits in the pipe for as long as the client does not read. The socket is
        // closed only when the connection is aborted.
        using var tree = new TempTree();
        tree.Write("large.bin", new byte[FileLength]);
        var closed = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        await using var host = await PeregrineHost.StartAsync(
            tree.Root,
            options => options.Watch.Enabled = false,
            fastPath: true,
            kestrel: k => k.Limits.MinResponseDataRate = new MinDataRate(bytesPerSecond: 1_000_000, gracePeriod: TimeSpan.FromSeconds(2)),
            listen: l => l.Use(next => connection =>
            {
                connection.ConnectionClosed.Register(() => closed.TrySetResult());
                return next(connection);
            }));
        using var client = new TcpClient { ReceiveBufferSize = 16 * 1024 };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        await client.GetStream().WriteAsync(Encoding.ASCII.GetBytes(string.Concat(Enumerable.Repeat("GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n", Requests))));

        var finished = await Task.WhenAny(closed.Task, Task.Delay(TimeSpan.FromSeconds(20)));

        Assert.Same(closed.Task, finished);
    }

    [Fact]
    public async Task AClientThatStopsReading_IsDisconnected()
    {
        using var tree = new TempTree();
        tree.Write("large.bin", new byte[FileLength]);
        await using var host = await PeregrineHost.StartAsync(
            tree.Root,
            options => options.Watch.Enabled = false,
            fastPath: true,
            kestrel: k => k.Limits.MinResponseDataRate = new MinDataRate(bytesPerSecond: 1_000_000, gracePeriod: TimeSpan.FromSeconds(2)));
        using var client = new TcpClient { ReceiveBufferSize = 16 * 1024 };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();
        var request = string.Concat(Enumerable.Repeat("GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\n", Requests));
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request));

        // 90 MB of responses wait; the kernel's buffers take a few MB of them, then the server's
        // flush waits on this client, which reads nothing for longer than the grace period plus
        // the batch at the minimum rate (2 s + 0.9 MB at 1 MB/s).
        await Task.Delay(TimeSpan.FromSeconds(6));

        long received = 0;
        var buffer = new byte[256 * 1024];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        try
        {
            int read;
            while ((read = await stream.ReadAsync(buffer, timeout.Token)) > 0)
            {
                received += read;
            }
        }
        catch (IOException)
        {
            // A reset after the server's close ends the stream too.
        }

        Assert.False(timeout.IsCancellationRequested, "the connection was still open after 30 s");
        Assert.InRange(received, 1, (long)Requests * FileLength / 2);
    }
}
