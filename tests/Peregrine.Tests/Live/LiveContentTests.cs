using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>Changes on disk reach clients within a second, with no restart.</summary>
[Collection(LiveCollection.Name)]
public sealed class LiveContentTests : IAsyncLifetime
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(1);
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("changing.txt", "version 1");
        _tree.Write("doomed.txt", "here for now");
        _host = await PeregrineHost.StartAsync(_tree.Root);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task NewFile_IsServedWithinOneSecond()
    {
        var timing = await PublicationClock.TimeAsync(_host, () => _tree.Write("docs/new.txt", "fresh"), snapshot => snapshot.TryFind("/docs/new.txt", out _));
        using var response = await _host.Client.GetAsync("/docs/new.txt");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("fresh", await response.Content.ReadAsStringAsync());
        Assert.True(timing.Own < s_limit, $"took {timing}");
    }

    [Fact]
    public async Task ChangedFile_IsServedWithItsNewContentAndTagWithinOneSecond()
    {
        using var before = await _host.Client.GetAsync("/changing.txt");
        var timing = await PublicationClock.TimeAsync(
            _host,
            () => _tree.Write("changing.txt", "version 2, longer"),
            snapshot => snapshot.TryFind("/changing.txt", out var entry) && entry.Identity.Length == "version 2, longer".Length);
        using var after = await _host.Client.GetAsync("/changing.txt");

        Assert.Equal("version 2, longer", await after.Content.ReadAsStringAsync());
        Assert.NotEqual(before.Headers.ETag, after.Headers.ETag);
        Assert.True(timing.Own < s_limit, $"took {timing}");
    }

    [Fact]
    public async Task DeletedFile_Answers404WithinOneSecond()
    {
        var timing = await PublicationClock.TimeAsync(_host, () => File.Delete(Path.Combine(_tree.Root, "doomed.txt")), snapshot => !snapshot.TryFind("/doomed.txt", out _));
        using var response = await _host.Client.GetAsync("/doomed.txt");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(timing.Own < s_limit, $"took {timing}");
    }

    [Fact]
    public async Task NewFolderWithIndex_IsServedAndRedirectedWithinOneSecond()
    {
        var timing = await PublicationClock.TimeAsync(_host, () => _tree.Write("section/index.html", "section"), snapshot => snapshot.TryFind("/section/index.html", out _));
        using var response = await _host.Client.GetAsync("/section");

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.True(timing.Own < s_limit, $"took {timing}");
    }

    [Fact]
    public async Task LargeFileRewrittenInPlaceMidSend_IsSentWholeAtItsPreviousVersion_ThenServedWithItsNewHeaders()
    {
        // A file streamed from disk is rewritten in place (to another length) while a response
        // for it is part-way through: the response is served from the copy of the version it
        // began with and completes with those bytes; the next ones carry the new file whole. The
        // file is far larger than what the socket buffers between a stalled client and the server
        // hold, so the send is still under way when the file changes.
        var original = Pattern(BigFileLength, seed: 1);
        var (contentLength, body, replacement) = await RewriteMidSendAsync(_host, _tree, original);

        Assert.Equal(BigFileLength, contentLength);
        Assert.True(body.AsSpan().SequenceEqual(original), $"the response carried {body.Length} bytes, not the {BigFileLength} of the version it began with");
        var served = await TimeUntilServedAsync(_host, replacement);
        Assert.True(served < s_limit, $"the new version was served {served.TotalMilliseconds:F0} ms after the response ended");
    }

    [Fact]
    public async Task LargeFileBeyondTheCopyLimit_RewrittenInPlaceMidSend_IsCutShort_ThenServedWithItsNewHeaders()
    {
        // Above Watch.MaxCopiedFileSize the file is read from the original, which the writer
        // destroys: the response must be cut short, never completed with bytes its headers do not
        // describe.
        await using var host = await PeregrineHost.StartAsync(_tree.Root, options => options.Watch.MaxCopiedFileSize = 1024 * 1024);
        var (contentLength, body, replacement) = await RewriteMidSendAsync(host, _tree, Pattern(BigFileLength, seed: 1));

        Assert.Equal(BigFileLength, contentLength);
        Assert.True(body.Length < contentLength, $"all {body.Length} bytes of a response whose file changed mid-send were sent");
        var served = await TimeUntilServedAsync(host, replacement);
        Assert.True(served < s_limit, $"the new version was served {served.TotalMilliseconds:F0} ms after the response ended");
    }

    /// <summary>
    /// Writes big.bin, starts a GET for it that reads slowly, rewrites the file in place with
    /// another length, then reads the response to its end: its Content-Length and the body bytes
    /// that arrived, and the new content.
    /// </summary>
    private static async Task<(long ContentLength, byte[] Body, byte[] Replacement)> RewriteMidSendAsync(PeregrineHost host, TempTree tree, byte[] original)
    {
        var path = tree.Write("big.bin", original);
        await TimeUntilAsync(async () =>
        {
            using var head = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/big.bin"));
            return head.Content.Headers.ContentLength == original.Length;
        });

        using var client = new TcpClient { ReceiveBufferSize = 64 * 1024 };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();
        await stream.WriteAsync("GET /big.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        var (contentLength, first) = await ReadHeadAndSomeBodyAsync(stream, atLeast: 64 * 1024);

        var replacement = Pattern(2 * 1024 * 1024, seed: 2);
        await File.WriteAllBytesAsync(path, replacement);
        return (contentLength, [.. first, .. await ReadToEndAsync(stream)], replacement);
    }

    /// <summary>
    /// How long until /big.bin is served as <paramref name="replacement"/>, which is then checked
    /// whole. Polled with HEAD: a GET answered with the previous version (32 MiB) takes long
    /// enough to hide for hundreds of milliseconds when the new one came.
    /// </summary>
    private static async Task<TimeSpan> TimeUntilServedAsync(PeregrineHost host, byte[] replacement)
    {
        var served = await TimeUntilAsync(async () =>
        {
            using var head = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/big.bin"));
            return head.Content.Headers.ContentLength == replacement.Length;
        });

        using var response = await host.Client.GetAsync("/big.bin");
        var body = await response.Content.ReadAsByteArrayAsync();
        Assert.Equal(response.Content.Headers.ContentLength, body.Length);
        Assert.True(body.AsSpan().SequenceEqual(replacement), "the new version's length was served with other bytes");
        return served;
    }

    private const int BigFileLength = 32 * 1024 * 1024;

    private static byte[] Pattern(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    /// <summary>Reads the response head and at least <paramref name="atLeast"/> body bytes; returns Content-Length and the body bytes read.</summary>
    private static async Task<(long ContentLength, byte[] Received)> ReadHeadAndSomeBodyAsync(NetworkStream stream, int atLeast)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var buffer = new byte[256 * 1024];
        var filled = 0;
        var headEnd = -1;
        while (headEnd < 0 || filled - headEnd - 4 < atLeast)
        {
            var read = await stream.ReadAsync(buffer.AsMemory(filled), timeout.Token);
            Assert.True(read > 0, $"the connection closed before the body began: {Encoding.Latin1.GetString(buffer, 0, Math.Min(filled, 400))}");
            filled += read;
            headEnd = headEnd >= 0 ? headEnd : buffer.AsSpan(0, filled).IndexOf("\r\n\r\n"u8);
        }

        var head = Encoding.Latin1.GetString(buffer, 0, headEnd);
        Assert.StartsWith("HTTP/1.1 200", head, StringComparison.Ordinal);
        var lengthLine = head.Split("\r\n").Single(line => line.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase));
        return (long.Parse(lengthLine["Content-Length:".Length..].Trim()), buffer[(headEnd + 4)..filled]);
    }

    /// <summary>Reads until the server closes the connection (or resets it); returns the bytes read.</summary>
    private static async Task<byte[]> ReadToEndAsync(NetworkStream stream)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        using var received = new MemoryStream();
        try
        {
            await stream.CopyToAsync(received, timeout.Token);
        }
        catch (IOException)
        {
            // Reset rather than closed: the response ends here all the same.
        }

        return received.ToArray();
    }

    private static async Task<TimeSpan> TimeUntilAsync(Func<Task<bool>> condition)
    {
        var stopwatch = Stopwatch.StartNew();
        while (stopwatch.Elapsed < TimeSpan.FromSeconds(10))
        {
            if (await condition())
            {
                return stopwatch.Elapsed;
            }

            await Task.Delay(10);
        }

        return stopwatch.Elapsed;
    }
}
