using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.FastPath;

/// <summary>
/// A request the fast path does not answer (a miss, a range) is lent to Kestrel, and the
/// connection is the fast path's again after it (FastPath/KestrelLease): one Kestrel connection
/// answers every lent request, its keep-alive timer does not close a connection the fast path
/// serves, and a request that cannot be lent gives Kestrel the rest of the connection. The
/// application marks its responses with the request's trace identifier, so each response says
/// who answered it: the fast path's carry no mark.
/// </summary>
public sealed class FastPathLeaseTests
{
    private const string Trace = "X-Trace";
    private static readonly byte[] s_file = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 200).Select(i => $"line {i}\n")));

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task RequestsTheFastPathDoesNotAnswer_AreKestrels_OneAtATime_AndTheConnectionComesBack(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor);
        using var requests = new HostingRequests(host.Services);
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();

        // One at a time, then the same again pipelined.
        var sequence = new[] { Get("/a.txt"), Get("/missing"), Get("/a.txt"), Get("/a.txt", "Range: bytes=5-9\r\n"), Get("/a.txt") };
        var responses = new List<Response>();
        foreach (var request in sequence)
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(request));
            responses.Add(await ReadResponseAsync(stream));
        }

        await stream.WriteAsync(Encoding.ASCII.GetBytes(string.Concat(sequence)));
        for (var i = 0; i < sequence.Length; i++)
        {
            responses.Add(await ReadResponseAsync(stream));
        }

        for (var round = 0; round < 2; round++)
        {
            var at = round * sequence.Length;
            Assert.Equal([200, 404, 200, 206, 200], responses.Skip(at).Take(sequence.Length).Select(r => r.Status));
            Assert.Equal(s_file, responses[at].Body);
            Assert.Equal(s_file[5..10], responses[at + 3].Body);
            Assert.Equal([false, true, false, true, false], responses.Skip(at).Take(sequence.Length).Select(r => r.Trace is not null));
        }

        // One Kestrel connection answered the four: its request count runs on.
        var traces = responses.Where(r => r.Trace is not null).Select(r => r.Trace!).ToList();
        Assert.Equal(["00000001", "00000002", "00000003", "00000004"], traces.Select(t => t[(t.LastIndexOf(':') + 1)..]));
        Assert.Single(traces.Select(t => t[..t.LastIndexOf(':')]).Distinct());
        Assert.Equal(4, requests.Count);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task AHeadThatCameInPieces_IsLentWhole_AndTheConnectionComesBack(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor);
        using var client = await ConnectAsync(host);
        client.NoDelay = true;
        var stream = client.GetStream();

        // Each piece arrives on its own: the fast path keeps the head begun and frames it once whole.
        foreach (var piece in new[] { "GET /missing HTTP/1.1\r\nHo", "st: x\r\nRange: bytes", "=0-1\r\n", "\r\n" + Get("/a.txt") })
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(piece));
            await Task.Delay(100);
        }

        var missing = await ReadResponseAsync(stream);
        var file = await ReadResponseAsync(stream);

        Assert.Equal(404, missing.Status);
        Assert.EndsWith(":00000001", missing.Trace);
        Assert.Equal(200, file.Status);
        Assert.Equal(s_file, file.Body);
        Assert.Null(file.Trace);
    }

    [Theory]
    [InlineData(false, 32, false)]
    [InlineData(false, 33, true)]
    [NativeData("the cleartext reactor (epoll)", true, 32, false)]
    [NativeData("the cleartext reactor (epoll)", true, 33, true)]
    public async Task AfterThirtyTwoRequestsLentInARow_TheNextGivesKestrelTheRestOfTheConnection(bool reactor, int misses, bool kestrels)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor);
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();

        // A hit first, then a run of misses: the count starts after the last answer of the fast path's.
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/a.txt") + string.Concat(Enumerable.Repeat(Get("/missing"), misses)) + Get("/a.txt")));
        Assert.Null((await ReadResponseAsync(stream)).Trace);
        for (var i = 0; i < misses; i++)
        {
            Assert.Equal(404, (await ReadResponseAsync(stream)).Status);
        }

        var last = await ReadResponseAsync(stream);
        Assert.Equal(200, last.Status);
        Assert.Equal(kestrels, last.Trace is not null);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task KestrelsKeepAliveTimer_DoesNotCloseALentConnectionTheFastPathServes(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor, keepAlive: TimeSpan.FromSeconds(2));
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);

        // Twice Kestrel's keep-alive timeout of requests the fast path answers.
        var busy = Stopwatch.StartNew();
        while (busy.Elapsed < TimeSpan.FromSeconds(4.5))
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/a.txt")));
            var response = await ReadResponseAsync(stream);
            Assert.Equal(200, response.Status);
            Assert.Null(response.Trace);
            await Task.Delay(250);
        }

        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing")));
        var again = await ReadResponseAsync(stream);
        Assert.Equal(404, again.Status);
        Assert.EndsWith(":00000002", again.Trace);

        // Idle, the connection closes after the keep-alive timeout, from its last response.
        var idle = Stopwatch.StartNew();
        Assert.Equal(0, await stream.ReadAsync(new byte[16]).AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.InRange(idle.ElapsedMilliseconds, 1_500, 5_000);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task ARequestThatCannotBeLent_AfterOneThatWas_GivesKestrelTheRestOfTheConnection(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor);
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing") + Get("/a.txt")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);
        Assert.Null((await ReadResponseAsync(stream)).Trace);

        // A body: Kestrel's, and every request after it.
        await stream.WriteAsync(Encoding.ASCII.GetBytes("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + Get("/a.txt")));
        var post = await ReadResponseAsync(stream);
        var after = await ReadResponseAsync(stream);

        Assert.Equal(404, post.Status);
        Assert.Equal("hello", post.Echo);
        Assert.EndsWith(":00000002", post.Trace);
        Assert.Equal(200, after.Status);
        Assert.Equal(s_file, after.Body);
        Assert.EndsWith(":00000003", after.Trace);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task AnUpgrade_AfterALentRequest_GivesKestrelTheConnectionBothWays(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor);
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing") + Get("/a.txt")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);
        Assert.Null((await ReadResponseAsync(stream)).Trace);

        await stream.WriteAsync(Encoding.ASCII.GetBytes("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n"));
        var head = new List<byte>();
        var one = new byte[1];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (head.Count < 4 || !head[^4..].SequenceEqual("\r\n\r\n"u8.ToArray()))
        {
            Assert.Equal(1, await stream.ReadAsync(one, timeout.Token));
            head.Add(one[0]);
        }

        Assert.StartsWith("HTTP/1.1 101 ", Encoding.ASCII.GetString([.. head]));
        await stream.WriteAsync("hello"u8.ToArray());
        var echoed = new byte[5];
        await stream.ReadExactlyAsync(echoed, timeout.Token);
        Assert.Equal("hello"u8.ToArray(), echoed);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task ARequestThatCannotBeLent_AfterKestrelsKeepAliveTimeoutWithTheFastPath_IsAnsweredByANewKestrelConnection(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor, keepAlive: TimeSpan.FromSeconds(4));
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);
        var busy = Stopwatch.StartNew();
        while (busy.Elapsed < TimeSpan.FromSeconds(5))
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/a.txt")));
            Assert.Null((await ReadResponseAsync(stream)).Trace);
            await Task.Delay(500);
        }

        await stream.WriteAsync(Encoding.ASCII.GetBytes("POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + Get("/a.txt")));
        var post = await ReadResponseAsync(stream);
        var after = await ReadResponseAsync(stream);

        // The first Kestrel connection's keep-alive timer ran out while it waited: a new one
        // answers, and counts from 1 again.
        Assert.Equal(404, post.Status);
        Assert.Equal("hello", post.Echo);
        Assert.EndsWith(":00000001", post.Trace);
        Assert.Equal(200, after.Status);
        Assert.EndsWith(":00000002", after.Trace);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task AfterALongRunOfTheFastPath_ALentRequestAndOneThatCannotBeLent_GoToTheSameKestrelConnection(bool reactor)
    {
        using var tree = Tree();
        await using var host = await StartAsync(tree, reactor, keepAlive: TimeSpan.FromSeconds(5));
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);

        // Longer than Kestrel's keep-alive timeout, so that its clock, which does not run while
        // it waits, is far behind when the next request is lent; its keep-alive timer must then
        // run from the end of that request, not from its clock's last reading.
        var busy = Stopwatch.StartNew();
        while (busy.Elapsed < TimeSpan.FromSeconds(7))
        {
            await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/a.txt")));
            Assert.Null((await ReadResponseAsync(stream)).Trace);
            await Task.Delay(500);
        }

        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing") + "POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + Get("/a.txt")));
        var missing = await ReadResponseAsync(stream);
        var post = await ReadResponseAsync(stream);
        var after = await ReadResponseAsync(stream);

        Assert.Equal(404, missing.Status);
        Assert.EndsWith(":00000002", missing.Trace);
        Assert.Equal(404, post.Status);
        Assert.Equal("hello", post.Echo);
        Assert.EndsWith(":00000003", post.Trace);
        Assert.Equal(200, after.Status);
        Assert.EndsWith(":00000004", after.Trace);
    }

    [Theory]
    [InlineData(false)]
    [NativeData("the cleartext reactor (epoll)", true)]
    public async Task TheServerStops_WhileKestrelWaitsForALentRequest(bool reactor)
    {
        using var tree = Tree();
        var host = await StartAsync(tree, reactor);
        using var client = await ConnectAsync(host);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(Get("/missing") + Get("/a.txt")));
        Assert.Equal(404, (await ReadResponseAsync(stream)).Status);
        Assert.Equal(200, (await ReadResponseAsync(stream)).Status);

        var stopping = Stopwatch.StartNew();
        await host.DisposeAsync().AsTask().WaitAsync(TimeSpan.FromSeconds(20));

        Assert.InRange(stopping.ElapsedMilliseconds, 0, 10_000);
        Assert.Equal(0, await stream.ReadAsync(new byte[16]).AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
    }

    private static string Get(string path, string fields = "") => $"GET {path} HTTP/1.1\r\nHost: x\r\n{fields}\r\n";

    private static TempTree Tree()
    {
        var tree = new TempTree();
        tree.Write("a.txt", s_file);
        return tree;
    }

    private static Task<PeregrineHost> StartAsync(TempTree tree, bool reactor, TimeSpan? keepAlive = null)
        => PeregrineHost.StartAsync(
            tree.Root,
            options => options.Watch.Enabled = false,
            before: app => app.Use(async (context, next) =>
            {
                if (context.Request.Path == "/echo" && context.Features.Get<IHttpUpgradeFeature>() is { IsUpgradableRequest: true } upgrade)
                {
                    // An upgraded connection: five bytes back as they came.
                    context.Response.Headers.Upgrade = "echo";
                    var raw = await upgrade.UpgradeAsync();
                    var bytes = new byte[5];
                    await raw.ReadExactlyAsync(bytes);
                    await raw.WriteAsync(bytes);
                    await raw.FlushAsync();
                    return;
                }

                context.Response.Headers[Trace] = context.TraceIdentifier;
                if (HttpMethods.IsPost(context.Request.Method))
                {
                    using var reader = new StreamReader(context.Request.Body);
                    context.Response.Headers["X-Echo"] = await reader.ReadToEndAsync();
                }

                await next(context);
            }),
            fastPath: true,
            reactor: reactor,
            kestrel: keepAlive is { } timeout ? k => k.Limits.KeepAliveTimeout = timeout : null);

    private static async Task<TcpClient> ConnectAsync(PeregrineHost host)
    {
        var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        return client;
    }

    private sealed record Response(int Status, string Head, byte[] Body)
    {
        public string? Trace => Field(Head, FastPathLeaseTests.Trace);

        public string? Echo => Field(Head, "X-Echo");

        private static string? Field(string head, string name)
            => head.Split("\r\n").FirstOrDefault(l => l.StartsWith(name + ": ", StringComparison.OrdinalIgnoreCase))?[(name.Length + 2)..];
    }

    /// <summary>Reads one response framed by Content-Length, within a time bound.</summary>
    private static async Task<Response> ReadResponseAsync(Stream stream)
    {
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        var head = new List<byte>();
        var one = new byte[1];
        while (head.Count < 4 || head[^4] != '\r' || head[^3] != '\n' || head[^2] != '\r' || head[^1] != '\n')
        {
            Assert.Equal(1, await stream.ReadAsync(one, timeout.Token));
            head.Add(one[0]);
        }

        var text = Encoding.ASCII.GetString([.. head]);
        var length = text.Split("\r\n").Single(l => l.StartsWith("Content-Length:", StringComparison.OrdinalIgnoreCase))[15..].Trim();
        var body = new byte[int.Parse(length)];
        await stream.ReadExactlyAsync(body, timeout.Token);
        return new Response(int.Parse(text.AsSpan(9, 3)), text, body);
    }
}
