using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.FastPath;

/// <summary>
/// A request head that arrives in pieces: the fast path copies an unfinished head out of the
/// pipe (so an idle client mid-head holds no 4 KiB block) and frames it with what follows. The
/// answers must be Kestrel's, piece by piece, whether the fast path answers the request or
/// hands it, copy and all, to Kestrel.
/// </summary>
public sealed partial class FastPathSplitHeadTests : IAsyncLifetime
{
    private const string Page = "<!doctype html><title>home</title>";
    private readonly TempTree _tree = new();
    private PeregrineHost _plain = null!;
    private PeregrineHost _fast = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", Page);
        void Configure(PeregrineOptions options) => options.Watch.Enabled = false;
        _plain = await PeregrineHost.StartAsync(_tree.Root, Configure);
        _fast = await PeregrineHost.StartAsync(_tree.Root, Configure, fastPath: true);
    }

    public async Task DisposeAsync()
    {
        await _plain.DisposeAsync();
        await _fast.DisposeAsync();
        _tree.Dispose();
    }

    public static TheoryData<string[], string, int> Cases => new()
    {
        // pieces, the status lines Kestrel gives, how many requests reach ASP.NET Core's hosting
        // layer on the fast path's server (its answers never do; nor do Kestrel's 400 and 431)
        { ["GET /index.html HTTP/1.1\r\nHost: x\r\n", "Connection: close\r\n\r\n"], "200", 0 },
        { ["GET /ind", "ex.html HTTP/1.1\r\nHo", "st: x\r\nConnection: close\r\n\r\n"], "200", 0 },
        { ["G", "E", "T", " /index.html HTTP/1.1\r\n", "Host: x\r\n", "Connection: close\r\n", "\r\n"], "200", 0 },
        // The split head answered, then more requests from the same read, then one for Kestrel.
        { ["GET /index.html HTTP/1.1\r\nHost: x\r\n", "\r\nGET /index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /missing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], "200 200 404", 1 },
        // Kestrel's after all: a method the fast path does not answer, with a body.
        { ["POST /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n", "\r\nabcGET /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"], "405 200", 2 },
        // A bare LF in the second piece: the fast path hands off; Kestrel takes it as a line end.
        { ["GET /index.html HTTP/1.1\r\nHost: x\r\n", "X-A: b\nConnection: close\r\n\r\n"], "200", 1 },
        // Too large once joined: Kestrel's 431.
        { ["GET /index.html HTTP/1.1\r\nHost: x\r\nX-Big: " + new string('a', 20_000), new string('b', 20_000), new string('c', 20_000) + "\r\n\r\n"], "431", 0 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task HeadInPieces_GetsKestrelsAnswers(string[] pieces, string expected, int reachingHosting)
    {
        var plain = await ExchangeAsync(_plain, pieces);
        var fast = await ExchangeAsync(_fast, pieces);

        Assert.Equal(expected, plain.Statuses);
        Assert.Equal(plain.Statuses, fast.Statuses);
        Assert.Equal(reachingHosting, fast.KestrelRequests);
        if (expected.StartsWith("200", StringComparison.Ordinal))
        {
            Assert.Contains(Page, fast.Text, StringComparison.Ordinal);
        }
    }

    /// <summary>Sends each piece as its own write, 100 ms apart (one read each), then reads until the server closes, within 10 s.</summary>
    private static async Task<(string Statuses, string Text, int KestrelRequests)> ExchangeAsync(PeregrineHost host, string[] pieces)
    {
        using var requests = new HostingRequests(host.Services);
        using var client = new TcpClient { NoDelay = true };
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();
        foreach (var piece in pieces)
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(piece));
            await Task.Delay(100);
        }

        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        using var received = new MemoryStream();
        try
        {
            await stream.CopyToAsync(received, timeout.Token);
        }
        catch (IOException)
        {
            // Kestrel may reset a connection it refused (431, 400) after its answer.
        }

        var text = Encoding.ASCII.GetString(received.ToArray());
        var statuses = string.Join(" ", StatusLine().Matches(text).Select(m => m.Groups[1].Value));
        return (statuses, text, requests.Count);
    }

    [GeneratedRegex(@"HTTP/1\.1 (\d{3})")]
    private static partial Regex StatusLine();
}
