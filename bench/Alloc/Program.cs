// Bytes allocated per request, whole process, over the wire: Kestrel on loopback, a raw-socket
// client that reuses its buffers, GC.GetTotalAllocatedBytes(precise: true) around N requests.
// Each scenario is run against Peregrine's middleware, against Peregrine's HTTP/1.1 fast path,
// and against a "ceiling" middleware that writes the same bytes with Content-Type and
// Content-Length and nothing else; the difference is what Peregrine allocates above Kestrel
// (and the client) themselves.
//
//   dotnet run -c Release --project bench/Alloc [-- REQUESTS]
//   dotnet run -c Release --project bench/Alloc -- REQUESTS metrics   (with /metrics listening)
//   dotnet run -c Release --project bench/Alloc -- tls [REQUESTS] [ROUNDS] [STREAMS]   (TlsAlloc.cs)
//   dotnet run -c Release --project bench/Alloc -- heads   (Heads.cs: reading a request head, JIT or AOT)
using System.Net;
using System.Net.Sockets;
using System.Runtime.CompilerServices;
using System.Security.Cryptography;
using System.Text;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Peregrine;
using Peregrine.Live;

if (args.Length > 0 && args[0] == "lookup")
{
    Lookup.Run();
    return;
}

if (args.Length > 0 && args[0] == "heads")
{
    Heads.Run();
    return;
}

if (args.Length > 0 && args[0] == "tls")
{
    await TlsAlloc.RunAsync(args);
    return;
}

var requests = args.Length > 0 ? int.Parse(args[0]) : 200_000;

// "metrics": Peregrine's servers also serve /metrics, as the server's --metrics does, so that a
// listener records every instrument (the request duration histogram among them) on each request.
var withMetrics = args.Contains("metrics");
var root = Directory.CreateTempSubdirectory("peregrine-alloc").FullName;
var content = new byte[3348];
new Random(1).NextBytes(content);
File.WriteAllBytes(Path.Combine(root, "file.webp"), content);

// A body large enough for the fast path's cleartext sends by sendfile(2) (Http1/SocketOutput).
var large = new byte[133_120];
new Random(2).NextBytes(large);
File.WriteAllBytes(Path.Combine(root, "large.webp"), large);

// A fingerprinted script, released again under a new name: the new version is answered to a
// client that holds the old one as a dictionary (RFC 9842), dcz against the kept old version.
var oldScript = Script(1);
var newScript = Script(2);
const string OldScriptPath = "/app.1a2b3c4d5e6f.js", NewScriptPath = "/app.6f5e4d3c2b1a.js";
File.WriteAllBytes(Path.Combine(root, OldScriptPath[1..]), oldScript);
byte[] delta = [];
// What the ceiling answers for the dictionary rows: the bytes Peregrine sent (its br body, its delta).
var ceilingBodies = new Dictionary<string, byte[]>(StringComparer.Ordinal);

var results = new List<(string Scenario, double Peregrine, double FastPath, double Ceiling)>();
await using (var peregrine = await StartAsync(useCeiling: false))
await using (var fastPath = await StartAsync(useCeiling: false, fastPath: true))
await using (var ceiling = await StartAsync(useCeiling: true))
{
    var etag = await GetETagAsync(peregrine.Port);
    var get = Request("GET", "");
    var conditional = Request("GET", $"If-None-Match: {etag}\r\n");
    var head = Request("HEAD", "");
    results.Add(("GET 200 (3,348 B, in memory)", await MeasureAsync(peregrine.Port, get), await MeasureAsync(fastPath.Port, get), await MeasureAsync(ceiling.Port, get)));
    results.Add(("GET 304 (If-None-Match)", await MeasureAsync(peregrine.Port, conditional), await MeasureAsync(fastPath.Port, conditional), await MeasureAsync(ceiling.Port, get)));
    results.Add(("HEAD 200", await MeasureAsync(peregrine.Port, head), await MeasureAsync(fastPath.Port, head), await MeasureAsync(ceiling.Port, head)));
    var getLarge = Request("GET", "", "/large.webp");
    results.Add(("GET 200 (133,120 B, in memory)", await MeasureAsync(peregrine.Port, getLarge), await MeasureAsync(fastPath.Port, getLarge), await MeasureAsync(ceiling.Port, getLarge)));

    // One byte range (206): the ceiling's row is the GET of the same file, a 200.
    var range = Request("GET", "Range: bytes=100-1099\r\n");
    results.Add(("GET 206 (1,000 B of 3,348 B)", await MeasureAsync(peregrine.Port, range), await MeasureAsync(fastPath.Port, range), await MeasureAsync(ceiling.Port, get)));
    var rangeLarge = Request("GET", "Range: bytes=20000-119999\r\n", "/large.webp");
    results.Add(("GET 206 (100,000 B of 133,120 B)", await MeasureAsync(peregrine.Port, rangeLarge), await MeasureAsync(fastPath.Port, rangeLarge), await MeasureAsync(ceiling.Port, getLarge)));

    // A dictionary asset as a browser asks for it: the response carries Use-As-Dictionary and
    // Vary; the ceiling's row is the same bytes without them, for the same request fields
    // (Kestrel allocates the names and values of fields it does not know, such as Sec-Fetch-*).
    const string Browser = "Accept-Encoding: gzip, deflate, br, zstd, dcb, dcz\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: no-cors\r\n";
    var asset = Request("GET", Browser, OldScriptPath);
    var assetBody = await BodyAsync(peregrine.Port, asset, "br");
    if (assetBody.Length == 0)
    {
        throw new InvalidOperationException($"{OldScriptPath} was not answered 200 br");
    }

    ceilingBodies["/asset"] = assetBody;
    results.Add(($"GET 200 dictionary asset ({assetBody.Length:N0} B br)", await MeasureAsync(peregrine.Port, asset), await MeasureAsync(fastPath.Port, asset), await MeasureAsync(ceiling.Port, Request("GET", Browser, "/asset"))));

    // The release: the new name written, the old one deleted; both servers keep the old version
    // and make the delta in the background. Measured once both answer dcz.
    File.WriteAllBytes(Path.Combine(root, NewScriptPath[1..]), newScript);
    File.Delete(Path.Combine(root, OldScriptPath[1..]));
    var dcz = Request("GET", $"{Browser}Available-Dictionary: :{Convert.ToBase64String(SHA256.HashData(oldScript))}:\r\n", NewScriptPath);
    delta = await DeltaAsync(peregrine.Port, dcz);
    await DeltaAsync(fastPath.Port, dcz);
    ceilingBodies["/delta"] = delta;
    results.Add(($"GET 200 dcz delta ({delta.Length:N0} B of {newScript.Length:N0} B)", await MeasureAsync(peregrine.Port, dcz), await MeasureAsync(fastPath.Port, dcz), await MeasureAsync(ceiling.Port, Request("GET", $"{Browser}Available-Dictionary: :{Convert.ToBase64String(SHA256.HashData(oldScript))}:\r\n", "/delta"))));
}

// The fast path answers below Kestrel's HTTP layer, so it can allocate less than the ceiling,
// which goes through that layer.
Console.WriteLine($"| scenario | Peregrine middleware B/request | Peregrine fast path B/request | ceiling B/request | middleware above ceiling |");
Console.WriteLine($"| --- | ---: | ---: | ---: | ---: |");
foreach (var (scenario, p, f, c) in results)
{
    Console.WriteLine($"| {scenario} | {p:F1} | {f:F1} | {c:F1} | {p - c:F1} |");
}

Console.WriteLine($"\n{requests:N0} requests per cell over one keep-alive connection; .NET {Environment.Version}; {Environment.ProcessorCount} cores{(withMetrics ? "; Peregrine's servers with /metrics listening" : "")}.");
Directory.Delete(root, recursive: true);

byte[] Request(string method, string headers, string path = "/file.webp")
    => Encoding.ASCII.GetBytes($"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n");

// A script of about 30 KB that compresses as code does; version 2 changes one line in fifty.
static byte[] Script(int version)
{
    var text = new StringBuilder();
    for (var i = 0; i < 600; i++)
    {
        var value = i % 50 == 7 ? i * 31 + version : i * 31;
        text.Append("export function handler").Append(i).Append("(event) { return event.detail.value + ").Append(value).Append("; }\n");
    }

    return Encoding.UTF8.GetBytes(text.ToString());
}

// The body of one answer to REQUEST, or nothing unless it is a 200 (in CODING, if given).
async Task<byte[]> BodyAsync(int port, byte[] request, string? coding = null)
{
    using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
    await socket.ConnectAsync(IPAddress.Loopback, port);
    var buffer = new byte[256 * 1024];
    await RoundTripAsync(socket, request, buffer, isHead: false);
    var headerEnd = buffer.AsSpan().IndexOf("\r\n\r\n"u8);
    var head = Encoding.ASCII.GetString(buffer, 0, headerEnd);
    if (!head.StartsWith("HTTP/1.1 200", StringComparison.Ordinal) || (coding is not null && !head.Contains($"Content-Encoding: {coding}\r\n", StringComparison.Ordinal)))
    {
        return [];
    }

    return buffer.AsSpan(headerEnd + 4, ContentLength(buffer.AsSpan(0, headerEnd))).ToArray();
}

// Asks until the answer is a dcz delta (made in the background after the release), for at most a minute.
async Task<byte[]> DeltaAsync(int port, byte[] request)
{
    var deadline = DateTime.UtcNow.AddMinutes(1);
    while (DateTime.UtcNow < deadline)
    {
        var body = await BodyAsync(port, request, "dcz");
        if (body.Length > 0)
        {
            // Let the background work of the release (the ordinary variants) finish first.
            await Task.Delay(2000);
            return body;
        }

        await Task.Delay(100);
    }

    throw new TimeoutException("no dcz answer within a minute of the release");
}

async Task<string> GetETagAsync(int port)
{
    using var client = new HttpClient();
    using var response = await client.GetAsync($"http://127.0.0.1:{port}/file.webp");
    return response.Headers.ETag!.Tag;
}

async Task<double> MeasureAsync(int port, byte[] request)
{
    using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
    await socket.ConnectAsync(IPAddress.Loopback, port);
    var buffer = new byte[256 * 1024];
    var isHead = request[0] == (byte)'H';

    // Warm up: tiered compilation, pools, the connection's own buffers.
    for (var i = 0; i < 20_000; i++)
    {
        await RoundTripAsync(socket, request, buffer, isHead);
    }

    GC.Collect();
    var before = GC.GetTotalAllocatedBytes(precise: true);
    for (var i = 0; i < requests; i++)
    {
        await RoundTripAsync(socket, request, buffer, isHead);
    }

    var after = GC.GetTotalAllocatedBytes(precise: true);
    return (after - before) / (double)requests;
}

// Pooled so that the client's own awaits do not allocate a state machine box per request.
[AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
static async ValueTask RoundTripAsync(Socket socket, byte[] request, byte[] buffer, bool isHead)
{
    await socket.SendAsync(request, SocketFlags.None);
    var received = 0;
    while (true)
    {
        var n = await socket.ReceiveAsync(buffer.AsMemory(received), SocketFlags.None);
        if (n == 0)
        {
            throw new IOException("connection closed");
        }

        received += n;
        var headerEnd = buffer.AsSpan(0, received).IndexOf("\r\n\r\n"u8);
        if (headerEnd < 0)
        {
            continue;
        }

        var length = isHead ? 0 : ContentLength(buffer.AsSpan(0, headerEnd));
        if (received >= headerEnd + 4 + length)
        {
            return;
        }
    }
}

static int ContentLength(ReadOnlySpan<byte> head)
{
    var at = head.IndexOf("Content-Length: "u8);
    if (at < 0)
    {
        return 0;
    }

    var rest = head[(at + 16)..];
    var end = rest.IndexOf((byte)'\r');
    return int.Parse(end < 0 ? rest : rest[..end]);
}

async Task<Server> StartAsync(bool useCeiling, bool fastPath = false)
{
    var builder = WebApplication.CreateSlimBuilder();
    builder.Logging.ClearProviders();
    builder.WebHost.ConfigureKestrel(k =>
    {
        k.AddServerHeader = false;
        k.Listen(IPAddress.Loopback, 0, listen =>
        {
            if (fastPath)
            {
                listen.UsePeregrineFastPath();
            }
        });
    });
    builder.Services.AddPeregrine(o => o.Root = root);
    var app = builder.Build();
    if (useCeiling)
    {
        app.Use(_ => context => CeilingResponse.Write(context, ceilingBodies.TryGetValue(context.Request.Path.Value!, out var body) ? body : context.Request.Path == "/large.webp" ? large : content, "image/webp"));
    }
    else
    {
        if (withMetrics)
        {
            app.UsePeregrineMetrics("/metrics");
        }

        app.UsePeregrine();
    }

    await app.StartAsync();
    if (!useCeiling)
    {
        await app.Services.GetRequiredService<FileCatalog>().Ready;
    }

    var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
    return new Server(app, new Uri(address).Port);
}

sealed record Server(WebApplication App, int Port) : IAsyncDisposable
{
    public async ValueTask DisposeAsync()
    {
        await App.StopAsync();
        await App.DisposeAsync();
    }
}
