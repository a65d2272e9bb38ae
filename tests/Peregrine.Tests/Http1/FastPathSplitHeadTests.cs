using System.IO.Pipelines;
using System.Net.Sockets;
using System.Text;
using System.Text.RegularExpressions;
using Microsoft.AspNetCore.Connections;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

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
        var plain = await ExchangeAsync(_plain, pieces, finish: false);
        var fast = await ExchangeAsync(_fast, pieces, finish: false);

        Assert.Equal(expected, plain.Statuses);
        Assert.Equal(plain.Statuses, fast.Statuses);
        Assert.Equal(reachingHosting, fast.KestrelRequests);
        if (expected.StartsWith("200", StringComparison.Ordinal))
        {
            Assert.Contains(Page, fast.Text, StringComparison.Ordinal);
        }
    }

    /// <summary>
    /// Kestrel answers a head the client ended before it was complete with 400, when its answer
    /// is written before its socket transport reports the FIN as the connection's close; under
    /// load that report can win and Kestrel sends nothing (its own race, which this test saw on
    /// the server without the fast path). The fast path's server always answers, with
    /// Kestrel's bytes.
    /// </summary>
    [Fact]
    public async Task HeadInPieces_ThenTheClientEndsIt_GetsKestrels400()
    {
        string[] pieces = ["GET /index.html HTTP/1.1\r\n", "Host: x\r\n"];
        var plain = await ExchangeAsync(_plain, pieces, finish: true);
        var fast = await ExchangeAsync(_fast, pieces, finish: true);

        Assert.Equal("400", fast.Statuses);
        Assert.Contains(plain.Statuses, new[] { "400", "" });
        if (plain.Statuses == "400")
        {
            Assert.Equal(WithoutDate(plain.Text), WithoutDate(fast.Text));
        }
    }

    /// <summary>
    /// The ordering that lost the 400 under load, made certain: Kestrel's socket transport
    /// reports the connection closed (ConnectionClosed) as soon as it reads the client's FIN, and
    /// Kestrel's HTTP/1.1 connection, started by a hand-off after that, aborts its output at once
    /// and sends nothing. Here the FIN reaches the fast path only once the transport has
    /// reported the connection closed.
    /// </summary>
    [Fact]
    public async Task HeadInPieces_ThenTheClientEndsIt_AfterTheTransportReportsItClosed_GetsKestrels400()
    {
        await using var late = await PeregrineHost.StartAsync(
            _tree.Root,
            options => options.Watch.Enabled = false,
            fastPath: true,
            listen: l => l.Use(next => connection =>
            {
                connection.Transport = new EndAfterClosed(connection);
                return next(connection);
            }));

        var fast = await ExchangeAsync(late, ["GET /index.html HTTP/1.1\r\n", "Host: x\r\n"], finish: true);

        Assert.Equal("400", fast.Statuses);
        Assert.Matches(@"^HTTP/1\.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\nDate: [^\r]+\r\nServer: Kestrel\r\n\r\n$", fast.Text);
    }

    private static string WithoutDate(string response) => DateLine().Replace(response, "Date: -\r\n");

    [GeneratedRegex(@"Date: [^\r]*\r\n")]
    private static partial Regex DateLine();

    /// <summary>A transport whose input delivers the end of the stream only after the connection's ConnectionClosed has fired (within 10 s).</summary>
    private sealed class EndAfterClosed(ConnectionContext connection) : IDuplexPipe
    {
        private readonly IDuplexPipe _inner = connection.Transport;

        public PipeReader Input { get; } = new Reader(connection.Transport.Input, connection.ConnectionClosed);

        public PipeWriter Output => _inner.Output;

        private sealed class Reader(PipeReader inner, CancellationToken closed) : PipeReader
        {
            public override async ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
            {
                var result = await inner.ReadAsync(cancellationToken);
                if (result.IsCompleted && !closed.IsCancellationRequested)
                {
                    var fired = new TaskCompletionSource();
                    using var registration = closed.Register(fired.SetResult);
                    await fired.Task.WaitAsync(TimeSpan.FromSeconds(10), cancellationToken);
                }

                return result;
            }

            public override bool TryRead(out ReadResult result) => inner.TryRead(out result);

            public override void AdvanceTo(SequencePosition consumed) => inner.AdvanceTo(consumed);

            public override void AdvanceTo(SequencePosition consumed, SequencePosition examined) => inner.AdvanceTo(consumed, examined);

            public override void CancelPendingRead() => inner.CancelPendingRead();

            public override void Complete(Exception? exception = null) => inner.Complete(exception);
        }
    }

    /// <summary>Sends each piece as its own write, 100 ms apart (one read each), then reads until the server closes, within 10 s.</summary>
    private static async Task<(string Statuses, string Text, int KestrelRequests)> ExchangeAsync(PeregrineHost host, string[] pieces, bool finish)
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

        if (finish)
        {
            client.Client.Shutdown(SocketShutdown.Send);
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
