using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Server.Connections;

/// <summary>
/// The cleartext reactor's own decisions, beyond the answers it shares with the fast path (which
/// FastPathDifferentialTests and the fuzzer compare with Kestrel's): when it hands a connection
/// to Kestrel, what goes with it, and how it ends the connections it keeps. A
/// <see cref="HandOffRecorder"/> behind the fast path tells whether Kestrel's HTTP layer saw a
/// connection; another before it, whether the reactor handed the connection to Kestrel at all. The reactor runs on Linux in native mode only; in portable mode the server keeps
/// Kestrel's transport, and these tests skip.
/// </summary>
public sealed class CleartextReactorTests
{
    private static readonly byte[] s_large = Enumerable.Range(0, 900_000).Select(i => (byte)((i / 65536 * 37) + (i * 7))).ToArray();

    // More than the socket's send buffer grows to (tcp_wmem's largest is 4 MiB by default), so
    // that a client that waits before reading leaves the server a full socket.
    private static readonly byte[] s_huge = Enumerable.Range(0, 8 << 20).Select(i => (byte)((i / 65536 * 41) + (i * 3))).ToArray();

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task IdleConnection_IsClosedAfterKestrelsKeepAliveTimeout()
    {
        await using var server = await ServerAsync(TimeSpan.FromSeconds(2));
        using var client = await ConnectAsync(server.Host);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        Assert.StartsWith("HTTP/1.1 200 OK", await ReadResponsesAsync(client, 1));
        var idle = Stopwatch.StartNew();

        // Closed by the reactor's sweep (once a second) after 2 s idle, with nothing sent.
        var read = await client.ReceiveAsync(new byte[16]).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(0, read);
        Assert.InRange(idle.ElapsedMilliseconds, 1_900, 5_000);
        Assert.False(server.Recorder.TakeHandedOff(LocalPort(client)));
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task NewConnectionThatSendsNothing_IsClosedAfterTheRequestHeadersTimeout()
    {
        // As the standalone server's prior-knowledge check closes one, not after the keep-alive
        // timeout. The timeout runs from the accept, which the kernel defers by about a second
        // for a connection that sends nothing (TCP_DEFER_ACCEPT): closed 3-4 s after the connect.
        await using var server = await ServerAsync(keepAlive: TimeSpan.FromSeconds(30), headers: TimeSpan.FromSeconds(2));
        using var client = await ConnectAsync(server.Host);
        var silent = Stopwatch.StartNew();

        var read = await client.ReceiveAsync(new byte[16]).WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(0, read);
        Assert.InRange(silent.ElapsedMilliseconds, 1_900, 5_000);
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task HeadInTwoParts_IsAnsweredByTheFastPathAfterTheReactor()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);

        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHo"u8.ToArray());
        await Task.Delay(100);
        await client.SendAsync("st: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        var responses = await ReadToEndAsync(client);

        Assert.Equal(2, Count(responses, "HTTP/1.1 200 OK"));
        Assert.EndsWith("\r\n\r\nhello", responses);
        Assert.False(server.Recorder.TakeHandedOff(LocalPort(client)));
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task ResponsesLargerThanTheSocketTakes_ArriveWholeAndInOrder()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);
        var request = "GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n";
        await client.SendAsync(Encoding.ASCII.GetBytes(request + request + "GET /large.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));

        // The client reads nothing for a while: the socket fills, and the rest is sent once it reads.
        await Task.Delay(300);
        var bytes = await ReadAllAsync(client);

        var at = 0;
        foreach (var expected in (byte[][])[s_large, "hello"u8.ToArray(), s_large, "hello"u8.ToArray(), s_large])
        {
            at = AssertResponse(bytes, at, expected);
        }

        Assert.Equal(bytes.Length, at);
        Assert.False(server.Recorder.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>
    /// A response larger than the socket takes, to a client that reads it late, is sent as the
    /// socket makes room, by the reactor itself; the next request on the connection is answered
    /// there too, and Kestrel never sees the connection.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task LargeResponsesOneAfterAnother_AreSentByTheReactor()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);

        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        var first = await ReadResponseAsync(client, s_huge.Length);
        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        var second = await ReadResponseAsync(client, s_huge.Length);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        var last = await ReadAllAsync(client);

        Assert.Equal(first.Length, AssertResponse(first, 0, s_huge));
        Assert.Equal(second.Length, AssertResponse(second, 0, s_huge));
        Assert.Equal(last.Length, AssertResponse(last, 0, "hello"u8.ToArray()));
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>
    /// What comes while a response waits for room, a request and then the end of the client's
    /// side, is read once the response has gone: the request is answered, then the connection ends.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task RequestAndEndSentWhileAResponseWaits_AreReadAfterIt()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);

        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        client.Shutdown(SocketShutdown.Send);
        await Task.Delay(300);
        var bytes = await ReadAllAsync(client);

        Assert.Equal(bytes.Length, AssertResponse(bytes, AssertResponse(bytes, 0, s_huge), "hello"u8.ToArray()));
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>
    /// A response to a request that closes the connection arrives whole even when the client
    /// sends more while it waits for room: that input is read and dropped before the close,
    /// which would otherwise reset the connection and lose the response's tail.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task InputAfterAClosingRequest_DoesNotCutItsResponseShort()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);

        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        var bytes = await ReadAllAsync(client);

        Assert.Equal(bytes.Length, AssertResponse(bytes, 0, s_huge));
    }

    /// <summary>
    /// A request that closes the connection, answered by the reactor itself: the last bytes of
    /// its response are held for the shutdown (MSG_MORE), so that they leave with the FIN. They
    /// must all arrive, then the end, without Kestrel.
    /// </summary>
    [NativeTheory("the cleartext reactor (epoll)")]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]
    public async Task ClosingRequest_IsAnsweredWholeThenTheConnectionEnds(string requests)
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);

        await client.SendAsync(Encoding.ASCII.GetBytes(requests));
        var responses = await ReadToEndAsync(client);

        Assert.Equal(Count(requests, "GET "), Count(responses, "\r\n\r\nhello"));
        Assert.EndsWith("\r\n\r\nhello", responses);
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>
    /// The listening socket holds a new connection in the kernel until its first bytes come
    /// (TCP_DEFER_ACCEPT, as nginx's "listen … deferred"), so that one wake accepts, reads and
    /// answers it.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task ListeningSocket_DefersAcceptUntilTheFirstBytesCome()
    {
        await using var server = await ServerAsync();

        Assert.True(ListeningSockets.DeferAcceptSeconds(server.Host.Address.Port) > 0);
    }

    /// <summary>
    /// A client that waits before its first request: within the kernel's deferral (accepted with
    /// the request, read at once) and past it (accepted without, read when epoll says it came).
    /// Both are answered by the reactor, a second request too, without Kestrel.
    /// </summary>
    [NativeTheory("the cleartext reactor (epoll)")]
    [InlineData(300)]
    [InlineData(2_500)]
    public async Task ClientThatWaitsBeforeItsFirstRequest_IsAnsweredByTheReactor(int wait)
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);

        await Task.Delay(wait);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        Assert.StartsWith("HTTP/1.1 200 OK", await ReadResponsesAsync(client, 1));
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        var responses = await ReadToEndAsync(client);

        Assert.Equal(1, Count(responses, "\r\n\r\nhello"));
        Assert.EndsWith("\r\n\r\nhello", responses);
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>
    /// Connections that wait to be accepted together: each thread accepts one a wake, and the
    /// listening socket, level-triggered, wakes it again while any waits. Every one is answered.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task ConnectionsWaitingTogether_AreAllAcceptedAndAnswered()
    {
        await using var server = await ServerAsync();
        var clients = await Task.WhenAll(Enumerable.Range(0, 64).Select(_ => ConnectAsync(server.Host)));
        try
        {
            await Task.WhenAll(clients.Select(client => client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray())));
            var responses = await Task.WhenAll(clients.Select(ReadToEndAsync));

            Assert.All(responses, response => Assert.EndsWith("\r\n\r\nhello", response));
            Assert.All(clients, client => Assert.False(server.Transport.TakeHandedOff(LocalPort(client))));
        }
        finally
        {
            foreach (var client in clients)
            {
                client.Dispose();
            }
        }
    }

    /// <summary>A client that stops reading a response is cut off at Kestrel's minimum response data rate, as Kestrel cuts off its own.</summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task ClientThatStopsReading_IsClosedAtTheMinimumResponseDataRate()
    {
        // 8 MiB at 10 MB/s after a grace period of 1.5 s: about 2.3 s, checked once a second.
        await using var server = await ServerAsync(limits: l => l.MinResponseDataRate = new MinDataRate(10_000_000, TimeSpan.FromSeconds(1.5)));
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);

        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(5_000);
        var received = 0;
        try
        {
            received = (await ReadAllAsync(client)).Length;
        }
        catch (SocketException ex) when (ex.SocketErrorCode == SocketError.ConnectionReset)
        {
            // Closed with bytes unsent: the kernel resets the connection.
        }

        Assert.InRange(received, 0, s_huge.Length - 1);
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>A response still being sent when the server stops is finished (by Kestrel, which stops gracefully), and the connection then closes.</summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task Stopping_FinishesAResponseStillBeingSent()
    {
        var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host, receiveBuffer: 16 * 1024);
        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);

        var stopping = server.DisposeAsync().AsTask();

        // The reactor hands the connection to Kestrel as it stops; only then does the client read.
        using (var handedOn = new CancellationTokenSource(TimeSpan.FromSeconds(10)))
        {
            while (!server.Transport.TakeHandedOff(LocalPort(client)))
            {
                await Task.Delay(10, handedOn.Token);
            }
        }

        var response = await ReadAllAsync(client);
        await stopping.WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(response.Length, AssertResponse(response, 0, s_huge));
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task RequestTheFastPathHandsOn_IsKestrelsWithWhatFollows()
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);

        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /missing HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=1-2\r\nConnection: close\r\n\r\n"u8.ToArray());
        var responses = await ReadToEndAsync(client);

        var statuses = System.Text.RegularExpressions.Regex.Matches(responses, "HTTP/1.1 [0-9]{3} [^\r]*").Select(match => match.Value).ToArray();
        Assert.Equal(["HTTP/1.1 200 OK", "HTTP/1.1 404 Not Found", "HTTP/1.1 206 Partial Content"], statuses);
        Assert.Contains("\r\n\r\nhelloHTTP/1.1 404", responses);
        Assert.EndsWith("\r\n\r\nel", responses);
        Assert.True(server.Recorder.TakeHandedOff(LocalPort(client)));
    }

    /// <summary>A client that closes its side after a whole head gets the answer; after part of one, Kestrel's 400.</summary>
    [NativeTheory("the cleartext reactor (epoll)")]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 200 OK", "\r\n\r\nhello")]
    [InlineData("GET /a.txt HTTP/1.1\r\nHost: x\r\n", "HTTP/1.1 400 Bad Request", "\r\n\r\n")]
    public async Task ClientThatClosesItsSide_GetsItsAnswerThenTheEnd(string request, string status, string end)
    {
        await using var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);

        await client.SendAsync(Encoding.ASCII.GetBytes(request));
        client.Shutdown(SocketShutdown.Send);
        var responses = await ReadToEndAsync(client);

        Assert.StartsWith(status, responses);
        Assert.EndsWith(end, responses);
        Assert.Equal(1, Count(responses, "HTTP/1.1 "));
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task PriorKnowledgeH2c_IsKestrelsHttp2()
    {
        // The standalone server, whose connection middleware answers h2c's preface with HTTP/2.
        using var tree = new TempTree();
        tree.Write("a.txt", "hello");
        await using var server = await Peregrine.Tests.Server.RunningServer.StartAsync(tree.Root);
        using var http = new HttpClient { DefaultRequestVersion = HttpVersion.Version20, DefaultVersionPolicy = HttpVersionPolicy.RequestVersionExact };

        using var response = await http.GetAsync(new Uri(server.Address, "/a.txt"));

        Assert.Equal(HttpVersion.Version20, response.Version);
        Assert.Equal("hello", await response.Content.ReadAsStringAsync());
    }

    /// <summary>
    /// In the standalone server, whose prior-knowledge check reads a connection's first bytes
    /// before anything else: a connection handed on with a response still to send must not
    /// wait there for bytes the client will not send until it has the response.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll)")]
    public async Task StandaloneServer_ResponseLargerThanTheSocketTakes_IsSentWithoutWaitingForTheClient()
    {
        var huge = s_huge;
        using var tree = new TempTree();
        tree.Write("huge.bin", huge);

        // Served by the fast path from the server's private copy, by sendfile (watching keeps one).
        await using var server = await Peregrine.Tests.Server.RunningServer.StartAsync(tree.Root);
        using var client = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true, ReceiveBufferSize = 16 * 1024 };
        await client.ConnectAsync(IPAddress.Loopback, server.Address.Port);

        await client.SendAsync("GET /huge.bin HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(300);
        var received = new MemoryStream();
        var buffer = new byte[64 * 1024];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(15));
        var end = -1;
        while (end < 0 || received.Length < end + 4 + huge.Length)
        {
            var read = await client.ReceiveAsync(buffer, timeout.Token);
            Assert.NotEqual(0, read);
            received.Write(buffer, 0, read);
            end = received.GetBuffer().AsSpan(0, (int)received.Length).IndexOf("\r\n\r\n"u8);
        }

        Assert.StartsWith("HTTP/1.1 200 OK", Encoding.ASCII.GetString(received.GetBuffer(), 0, end));
        Assert.True(received.GetBuffer().AsSpan(end + 4, huge.Length).SequenceEqual(huge));
        Assert.Equal(end + 4 + huge.Length, received.Length);
    }

    /// <summary>
    /// A body streamed from its private copy whose pages left the page cache, asked for on a
    /// connection the reactor holds: the connection waits while they are read back off the
    /// reactor's thread, then the reactor sends it, and the requests behind it, by sendfile; the connection never goes to Kestrel, which would have
    /// kept it for its life.
    /// </summary>
    [NativeFact("the cleartext reactor (epoll), cachestat(2) and private copies")]
    public async Task BodyWhosePagesLeftTheCache_IsSentByTheReactorOnceTheyAreReadBack()
    {
        await using var server = await ServerAsync(fromDisk: true);
        var catalog = server.Host.Services.GetRequiredService<FileCatalog>();
        Assert.True(catalog.Current!.TryFind("/large.bin", out var entry));
        Assert.Null(entry.Identity.Content);
        var copy = entry.Identity.PhysicalPath!;
        Assert.True(catalog.HoldsCopy(copy), "large.bin is streamed from a private copy");
        using var client = await ConnectAsync(server.Host);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        var first = await ReadResponseAsync(client, 5);

        // Dropped before any socket has sent the copy's pages: pages a socket may still hold
        // are not dropped.
        PageCache.Evict(copy);
        await client.SendAsync("GET /large.bin HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        await Task.Delay(100);
        await client.SendAsync("GET /large.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"u8.ToArray());
        var rest = await ReadAllAsync(client);

        Assert.Equal(first.Length, AssertResponse(first, 0, "hello"u8.ToArray()));
        var at = 0;
        foreach (var expected in (byte[][])[s_large, "hello"u8.ToArray(), s_large])
        {
            at = AssertResponse(rest, at, expected);
        }

        Assert.Equal(rest.Length, at);
        Assert.False(server.Transport.TakeHandedOff(LocalPort(client)));
    }

    [NativeFact("the cleartext reactor (epoll)")]
    public async Task Stopping_ClosesTheIdleConnectionsTheReactorHolds()
    {
        var server = await ServerAsync();
        using var client = await ConnectAsync(server.Host);
        await client.SendAsync("GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"u8.ToArray());
        Assert.StartsWith("HTTP/1.1 200 OK", await ReadResponsesAsync(client, 1));

        var stopping = Stopwatch.StartNew();
        await server.DisposeAsync();

        Assert.InRange(stopping.ElapsedMilliseconds, 0, 4_000);
        Assert.Equal(0, await client.ReceiveAsync(new byte[16]).WaitAsync(TimeSpan.FromSeconds(5)));
    }

    /// <param name="fromDisk">Files over 64 KiB streamed from their private copies (watching on), rather than all held in memory.</param>
    private static async Task<Server> ServerAsync(TimeSpan? keepAlive = null, TimeSpan? headers = null, Action<KestrelServerLimits>? limits = null, bool fromDisk = false)
    {
        var tree = new TempTree();
        tree.Write("a.txt", "hello");
        tree.Write("large.bin", s_large);
        tree.Write("huge.bin", s_huge);
        var recorder = new HandOffRecorder();
        var transport = new HandOffRecorder();
        var host = await PeregrineHost.StartAsync(
            tree.Root,
            options =>
            {
                if (fromDisk)
                {
                    options.MaxCachedFileSize = 64 << 10;
                    return;
                }

                options.Watch.Enabled = false;

                // huge.bin held in memory too, so the fast path answers it (by sendfile from its sealed copy).
                options.MaxCachedFileSize = 16 << 20;
            },
            fastPath: true,
            reactor: true,
            kestrel: k =>
            {
                k.Limits.KeepAliveTimeout = keepAlive ?? k.Limits.KeepAliveTimeout;
                k.Limits.RequestHeadersTimeout = headers ?? k.Limits.RequestHeadersTimeout;
                limits?.Invoke(k.Limits);
            },
            listen: transport.Install,
            behindFastPath: recorder.Install);
        return new Server(host, recorder, transport, tree);
    }

    private static async Task<Socket> ConnectAsync(PeregrineHost host, int receiveBuffer = 0)
    {
        var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
        if (receiveBuffer != 0)
        {
            socket.ReceiveBufferSize = receiveBuffer;
        }

        await socket.ConnectAsync(IPAddress.Loopback, host.Address.Port);
        return socket;
    }

    private static int LocalPort(Socket socket) => ((IPEndPoint)socket.LocalEndPoint!).Port;

    private static int Count(string text, string part) => text.Split(part).Length - 1;

    private static async Task<byte[]> ReadAllAsync(Socket client)
    {
        using var received = new MemoryStream();
        var buffer = new byte[64 * 1024];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        while (await client.ReceiveAsync(buffer, timeout.Token) is var read and > 0)
        {
            received.Write(buffer, 0, read);
        }

        return received.ToArray();
    }

    private static async Task<string> ReadToEndAsync(Socket client) => Encoding.Latin1.GetString(await ReadAllAsync(client));

    /// <summary>Asserts that a 200 response whose body is <paramref name="body"/> starts at <paramref name="at"/> in <paramref name="bytes"/>; returns where it ends.</summary>
    private static int AssertResponse(byte[] bytes, int at, byte[] body)
    {
        var end = bytes.AsSpan(at).IndexOf("\r\n\r\n"u8);
        Assert.True(end >= 0, "no end of head");
        end += at;
        Assert.StartsWith("HTTP/1.1 200 OK", Encoding.ASCII.GetString(bytes, at, end - at));
        Assert.True(bytes.Length - end - 4 >= body.Length, "body cut short");
        Assert.True(bytes.AsSpan(end + 4, body.Length).SequenceEqual(body));
        return end + 4 + body.Length;
    }

    /// <summary>Reads one response whose body is <paramref name="length"/> bytes, without waiting for the end.</summary>
    private static async Task<byte[]> ReadResponseAsync(Socket client, int length)
    {
        using var received = new MemoryStream();
        var buffer = new byte[64 * 1024];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(20));
        var end = -1;
        while (end < 0 || received.Length < end + 4 + length)
        {
            var read = await client.ReceiveAsync(buffer, timeout.Token);
            Assert.NotEqual(0, read);
            received.Write(buffer, 0, read);
            end = received.GetBuffer().AsSpan(0, (int)received.Length).IndexOf("\r\n\r\n"u8);
        }

        return received.ToArray();
    }

    /// <summary>Reads until <paramref name="count"/> responses of "hello" have come, without waiting for the end.</summary>
    private static async Task<string> ReadResponsesAsync(Socket client, int count)
    {
        var text = new StringBuilder();
        var buffer = new byte[4096];
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(10));
        while (Count(text.ToString(), "\r\n\r\nhello") < count)
        {
            var read = await client.ReceiveAsync(buffer, timeout.Token);
            Assert.NotEqual(0, read);
            text.Append(Encoding.Latin1.GetString(buffer, 0, read));
        }

        return text.ToString();
    }

    private sealed class Server(PeregrineHost host, HandOffRecorder recorder, HandOffRecorder transport, TempTree tree) : IAsyncDisposable
    {
        public PeregrineHost Host { get; } = host;

        /// <summary>Connections Kestrel's HTTP layer saw (the fast path handed a request on).</summary>
        public HandOffRecorder Recorder { get; } = recorder;

        /// <summary>Connections the reactor handed to Kestrel at all.</summary>
        public HandOffRecorder Transport { get; } = transport;

        public async ValueTask DisposeAsync()
        {
            await Host.DisposeAsync();
            tree.Dispose();
        }
    }
}
