using System.Diagnostics;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Http1;

/// <summary>
/// A request the fast path does not answer (a miss, a range) is lent to Kestrel, and the
/// connection is the fast path's again after it (Http1/KestrelLease): one Kestrel connection
/// answers every lent request, its keep-alive timer does not close a connection the fast path
/// serves, and a request that cannot be lent gives Kestrel the rest of the connection. The
/// application marks its responses with the request's trace identifier, so each response says
/// who answered it: the fast path's carry no mark. Each test runs on Kestrel's socket transport
/// and on the standalone server's reactor.
/// </summary>
public sealed class FastPathLeaseTests
{
    private const string Trace = "X-Trace";
    private const string Reactor = "the cleartext reactor (epoll)";
    private const string Post = "POST /form HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
    private static readonly byte[] s_file = Encoding.ASCII.GetBytes(string.Concat(Enumerable.Range(0, 200).Select(i => $"line {i}\n")));

    [Theory]
    [InlineData(false)]
    [NativeData(Reactor, true)]
    public async Task RequestsTheFastPathDoesNotAnswer_AreKestrels_OneAtATime_AndTheConnectionComesBack(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor);
        using var requests = new HostingRequests(session.Host.Services);

        // One at a time, then the same again pipelined.
        var sequence = new[] { Get("/a.txt"), Get("/missing"), Get("/a.txt"), Get("/a.txt", "If-Match: *\r\nRange: bytes=5-9\r\n"), Get("/a.txt") };
        var responses = new List<Response>();
        foreach (var request in sequence)
        {
            await session.SendAsync(request);
            responses.Add(await session.ReadAsync());
        }

        await session.SendAsync(string.Concat(sequence));
        for (var i = 0; i < sequence.Length; i++)
        {
            responses.Add(await session.ReadAsync());
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
    [NativeData(Reactor, true)]
    public async Task AHeadThatCameInPieces_IsLentWhole_AndTheConnectionComesBack(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor);
        session.Client.NoDelay = true;

        // Each piece arrives on its own: the fast path keeps the head begun and frames it once whole.
        foreach (var piece in new[] { "GET /missing HTTP/1.1\r\nHo", "st: x\r\nRange: bytes", "=0-1\r\n", "\r\n" + Get("/a.txt") })
        {
            await session.SendAsync(piece);
            await Task.Delay(100);
        }

        var missing = await session.ReadAsync();
        var file = await session.ReadAsync();

        Assert.Equal(404, missing.Status);
        Assert.EndsWith(":00000001", missing.Trace);
        Assert.Equal(200, file.Status);
        Assert.Equal(s_file, file.Body);
        Assert.Null(file.Trace);
    }

    [Theory]
    [InlineData(false, 32, false)]
    [InlineData(false, 33, true)]
    [NativeData(Reactor, true, 32, false)]
    [NativeData(Reactor, true, 33, true)]
    public async Task AfterThirtyTwoRequestsLentInARow_TheNextGivesKestrelTheRestOfTheConnection(bool reactor, int misses, bool kestrels)
    {
        await using var session = await Session.OpenAsync(reactor);

        // A hit first, then a run of misses: the count starts after the last answer of the fast path's.
        await session.SendAsync(Get("/a.txt") + string.Concat(Enumerable.Repeat(Get("/missing"), misses)) + Get("/a.txt"));
        Assert.Null((await session.ReadAsync()).Trace);
        for (var i = 0; i < misses; i++)
        {
            Assert.Equal(404, (await session.ReadAsync()).Status);
        }

        var last = await session.ReadAsync();
        Assert.Equal(200, last.Status);
        Assert.Equal(kestrels, last.Trace is not null);
    }

    [Theory]
    [InlineData(false)]
    [NativeData(Reactor, true)]
    public async Task KestrelsKeepAliveTimer_DoesNotCloseALentConnectionTheFastPathServes(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor, keepAlive: TimeSpan.FromSeconds(2));
        await session.LendOneAsync();

        // Twice Kestrel's keep-alive timeout of requests the fast path answers.
        await session.ServeFromTheFastPathAsync(TimeSpan.FromSeconds(4.5), TimeSpan.FromMilliseconds(250));

        await session.SendAsync(Get("/missing"));
        var again = await session.ReadAsync();
        Assert.Equal(404, again.Status);
        Assert.EndsWith(":00000002", again.Trace);

        // Idle, the connection closes after the keep-alive timeout, from its last response.
        var idle = Stopwatch.StartNew();
        Assert.Equal(0, await session.Stream.ReadAsync(new byte[16]).AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.InRange(idle.ElapsedMilliseconds, 1_500, 5_000);
    }

    [Theory]
    [InlineData(false)]
    [NativeData(Reactor, true)]
    public async Task ARequestThatCannotBeLent_AfterOneThatWas_GivesKestrelTheRestOfTheConnection(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor);
        await session.LendOneAsync();
        await session.ServeFromTheFastPathAsync(TimeSpan.Zero, TimeSpan.Zero);

        // A body: Kestrel's, and every request after it.
        await session.SendAsync(Post + Get("/a.txt"));
        var post = await session.ReadAsync();
        var after = await session.ReadAsync();

        Assert.Equal(404, post.Status);
        Assert.Equal("hello", post.Echo);
        Assert.EndsWith(":00000002", post.Trace);
        Assert.Equal(200, after.Status);
        Assert.Equal(s_file, after.Body);
        Assert.EndsWith(":00000003", after.Trace);
    }

    [Theory]
    [InlineData(false)]
    [NativeData(Reactor, true)]
    public async Task AnUpgrade_AfterALentRequest_GivesKestrelTheConnectionBothWays(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor);
        await session.LendOneAsync();
        await session.ServeFromTheFastPathAsync(TimeSpan.Zero, TimeSpan.Zero);

        await session.SendAsync("GET /echo HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n");
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        Assert.StartsWith("HTTP/1.1 101 ", await RawHttp.ReadHeadAsync(session.Stream, timeout.Token));
        await session.SendAsync("hello");
        var echoed = new byte[5];
        await session.Stream.ReadExactlyAsync(echoed, timeout.Token);
        Assert.Equal("hello"u8.ToArray(), echoed);
    }

    [Theory]
    [InlineData(false)]
    [NativeData(Reactor, true)]
    public async Task AfterALongRunOfTheFastPath_ALentRequestAndOneThatCannotBeLent_GoToTheSameKestrelConnection(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor, keepAlive: TimeSpan.FromSeconds(5));
        await session.LendOneAsync();

        // Longer than Kestrel's keep-alive timeout, so that its clock, which does not run while
        // it waits, is far behind when the next request is lent; its keep-alive timer must then
        // run from the end of that request, not from its clock's last reading.
        await session.ServeFromTheFastPathAsync(TimeSpan.FromSeconds(7), TimeSpan.FromMilliseconds(500));

        await session.SendAsync(Get("/missing") + Post + Get("/a.txt"));
        var missing = await session.ReadAsync();
        var post = await session.ReadAsync();
        var after = await session.ReadAsync();

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
    [NativeData(Reactor, true)]
    public async Task ARequestThatCannotBeLent_AfterKestrelsKeepAliveTimeoutWithTheFastPath_IsAnsweredByANewKestrelConnection(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor, keepAlive: TimeSpan.FromSeconds(4));
        await session.LendOneAsync();
        await session.ServeFromTheFastPathAsync(TimeSpan.FromSeconds(5), TimeSpan.FromMilliseconds(500));

        await session.SendAsync(Post + Get("/a.txt"));
        var post = await session.ReadAsync();
        var after = await session.ReadAsync();

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
    [NativeData(Reactor, true)]
    public async Task TheServerStops_WhileKestrelWaitsForALentRequest(bool reactor)
    {
        await using var session = await Session.OpenAsync(reactor);
        await session.LendOneAsync();
        await session.ServeFromTheFastPathAsync(TimeSpan.Zero, TimeSpan.Zero);

        var stopping = Stopwatch.StartNew();
        await session.StopServerAsync().WaitAsync(TimeSpan.FromSeconds(20));

        Assert.InRange(stopping.ElapsedMilliseconds, 0, 10_000);
        Assert.Equal(0, await session.Stream.ReadAsync(new byte[16]).AsTask().WaitAsync(TimeSpan.FromSeconds(10)));
    }

    private static string Get(string path, string fields = "") => $"GET {path} HTTP/1.1\r\nHost: x\r\n{fields}\r\n";

    private sealed record Response(int Status, string Head, byte[] Body)
    {
        public string? Trace => Field(Head, FastPathLeaseTests.Trace);

        public string? Echo => Field(Head, "X-Echo");

        private static string? Field(string head, string name)
            => head.Split("\r\n").FirstOrDefault(l => l.StartsWith(name + ": ", StringComparison.OrdinalIgnoreCase))?[(name.Length + 2)..];
    }

    /// <summary>A server with the fast path over a tree of one file, and one connection to it.</summary>
    private sealed class Session : IAsyncDisposable
    {
        private readonly TempTree _tree;
        private bool _stopped;

        private Session(TempTree tree, PeregrineHost host, TcpClient client)
        {
            _tree = tree;
            Host = host;
            Client = client;
            Stream = client.GetStream();
        }

        public PeregrineHost Host { get; }

        public TcpClient Client { get; }

        public NetworkStream Stream { get; }

        public static async Task<Session> OpenAsync(bool reactor, TimeSpan? keepAlive = null)
        {
            var tree = new TempTree();
            tree.Write("a.txt", s_file);
            var host = await PeregrineHost.StartAsync(
                tree.Root,
                options => options.Watch.Enabled = false,
                before: app => app.Use(Application),
                fastPath: true,
                reactor: reactor,
                kestrel: keepAlive is { } timeout ? k => k.Limits.KeepAliveTimeout = timeout : null);
            var client = new TcpClient();
            await client.ConnectAsync(host.Address.Host, host.Address.Port);
            return new Session(tree, host, client);
        }

        public Task SendAsync(string text) => Stream.WriteAsync(Encoding.ASCII.GetBytes(text)).AsTask();

        public async Task<Response> ReadAsync()
        {
            var (status, head, body) = await RawHttp.ReadFramedResponseAsync(Stream);
            return new Response(status, head, body);
        }

        /// <summary>A miss, lent to Kestrel.</summary>
        public async Task LendOneAsync()
        {
            await SendAsync(Get("/missing"));
            Assert.Equal(404, (await ReadAsync()).Status);
        }

        /// <summary>The file, answered by the fast path, at least once, then again every <paramref name="pause"/> for <paramref name="span"/>.</summary>
        public async Task ServeFromTheFastPathAsync(TimeSpan span, TimeSpan pause)
        {
            var busy = Stopwatch.StartNew();
            do
            {
                await SendAsync(Get("/a.txt"));
                var response = await ReadAsync();
                Assert.Equal(200, response.Status);
                Assert.Null(response.Trace);
                await Task.Delay(pause);
            }
            while (busy.Elapsed < span);
        }

        public async Task StopServerAsync()
        {
            _stopped = true;
            await Host.DisposeAsync();
        }

        public async ValueTask DisposeAsync()
        {
            Client.Dispose();
            if (!_stopped)
            {
                await Host.DisposeAsync();
            }

            _tree.Dispose();
        }

        /// <summary>Marks each response with its trace identifier, echoes a POST's body, and upgrades /echo to echo five bytes.</summary>
        private static async Task Application(HttpContext context, RequestDelegate next)
        {
            if (context.Request.Path == "/echo" && context.Features.Get<IHttpUpgradeFeature>() is { IsUpgradableRequest: true } upgrade)
            {
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
        }
    }
}
