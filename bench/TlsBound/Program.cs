using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Logging.Abstractions;

// The least a managed HTTPS/1.1 server does per request: SslStream, one fixed response per
// request head, nothing else. Three ways under it:
//   socket   the stream reads and writes the socket (NetworkStream);
//   kestrel  it reads through Kestrel's socket transport (its receive loop and input pipe, as
//            under Kestrel's HttpsConnectionMiddleware) and writes the socket, as Peregrine's
//            Tls/EncryptedOutput does;
//   https    Kestrel's own: its socket transport (inline scheduling, as Peregrine's HTTP/1.1 TLS
//            connections), its connection and HttpsConnectionMiddleware, and a connection
//            middleware that answers from the TLS pipe, where Peregrine's fast path sits.
// bench/TlsBound/run measures them beside Peregrine and nginx. Not a server: no parsing, no
// timeouts, no limits; for measurement on 127.0.0.1 only.
//
//   peregrine-tls-bound socket|kestrel|https PORT FILE CERT.pem KEY.pem
if (args.Length != 5 || args[0] is not ("socket" or "kestrel" or "https"))
{
    Console.Error.WriteLine("usage: peregrine-tls-bound socket|kestrel|https PORT FILE CERT.pem KEY.pem");
    return 2;
}

var viaKestrel = args[0] == "kestrel";
var port = int.Parse(args[1], System.Globalization.CultureInfo.InvariantCulture);
var body = File.ReadAllBytes(args[2]);
using var pem = X509Certificate2.CreateFromPemFile(args[3], args[4]);
var certificate = X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), null);
var head = Encoding.ASCII.GetBytes(
    $"HTTP/1.1 200 OK\r\nContent-Length: {body.Length}\r\nContent-Type: application/octet-stream\r\n" +
    "Date: Sat, 28 Nov 2026 20:00:00 GMT\r\nServer: Kestrel\r\nETag: \"1dc2a3b4c5d6e7f\"\r\n" +
    "Last-Modified: Sat, 28 Nov 2026 10:00:00 GMT\r\nAccept-Ranges: bytes\r\n\r\n");
var response = new byte[head.Length + body.Length];
head.CopyTo(response, 0);
body.CopyTo(response, head.Length);

var options = new SslServerAuthenticationOptions
{
    ServerCertificateContext = SslStreamCertificateContext.Create(certificate, null),
    EnabledSslProtocols = SslProtocols.Tls13,
};

if (args[0] == "https")
{
    var builder = WebApplication.CreateSlimBuilder();
    builder.Logging.ClearProviders();
    builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);
    builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen =>
    {
        listen.Protocols = HttpProtocols.Http1;
        listen.UseHttps(https =>
        {
            https.ServerCertificate = certificate;
            https.SslProtocols = SslProtocols.Tls13;
        });
        listen.Use(_ => AnswerAsync);
    }));
    await using var app = builder.Build();
    await app.RunAsync();
    return 0;
}
using var transport = new SocketConnectionContextFactory(new SocketConnectionFactoryOptions { UnsafePreferInlineScheduling = true }, NullLogger.Instance);
using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
listener.Bind(new IPEndPoint(IPAddress.Loopback, port));
listener.Listen(1024);
while (true)
{
    var socket = await listener.AcceptAsync();
    socket.NoDelay = true;
    Stream inner = viaKestrel ? new TransportStream(transport.Create(socket).Transport.Input, socket) : new NetworkStream(socket, ownsSocket: true);
    _ = ServeAsync(new SslStream(inner));
}

// Answers each request head in the TLS pipe with the response, through Kestrel's output pipe.
async Task AnswerAsync(ConnectionContext connection)
{
    var input = connection.Transport.Input;
    var output = connection.Transport.Output;
    try
    {
        while (true)
        {
            var result = await input.ReadAsync();
            var buffer = result.Buffer;
            var answered = 0;
            while (buffer.PositionOf((byte)'\n') is { } end)
            {
                // A head ends with an empty line: count the heads by their "\r\n\r\n".
                var line = buffer.Slice(0, end);
                buffer = buffer.Slice(buffer.GetPosition(1, end));
                if (line.Length <= 1)
                {
                    output.Write(response);
                    answered++;
                }
            }

            input.AdvanceTo(buffer.Start, buffer.End);
            if (answered != 0 && (await output.FlushAsync()).IsCompleted || result.IsCompleted)
            {
                return;
            }
        }
    }
    catch (Exception e) when (e is IOException or ConnectionResetException or ConnectionAbortedException)
    {
        // The client went away.
    }
}

async Task ServeAsync(SslStream tls)
{
    try
    {
        await using var _ = tls;
        await tls.AuthenticateAsServerAsync(options);
        var buffer = new byte[16384];
        var held = 0;
        while (true)
        {
            var read = await tls.ReadAsync(buffer.AsMemory(held));
            if (read == 0)
            {
                return;
            }

            held += read;
            var start = 0;
            int end;
            while ((end = buffer.AsSpan(start, held - start).IndexOf("\r\n\r\n"u8)) >= 0)
            {
                start += end + 4;
                await tls.WriteAsync(response);
            }

            if (start == 0 && held == buffer.Length)
            {
                return;
            }

            buffer.AsSpan(start, held - start).CopyTo(buffer);
            held -= start;
        }
    }
    catch (Exception e) when (e is IOException or SocketException or AuthenticationException or ObjectDisposedException)
    {
        // The client went away.
    }
}

/// <summary>Reads from a transport's input pipe (as Kestrel's DuplexPipeStream does) and writes the socket.</summary>
internal sealed class TransportStream(PipeReader input, Socket socket) : Stream
{
    public override bool CanRead => true;

    public override bool CanWrite => true;

    public override bool CanSeek => false;

    public override long Length => throw new NotSupportedException();

    public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

    public override async ValueTask<int> ReadAsync(Memory<byte> destination, CancellationToken cancellationToken = default)
    {
        while (true)
        {
            var result = await input.ReadAsync(cancellationToken);
            var buffer = result.Buffer;
            if (!buffer.IsEmpty)
            {
                var count = (int)Math.Min(buffer.Length, destination.Length);
                buffer.Slice(0, count).CopyTo(destination.Span);
                input.AdvanceTo(buffer.GetPosition(count));
                return count;
            }

            input.AdvanceTo(buffer.End);
            if (result.IsCompleted)
            {
                return 0;
            }
        }
    }

    public override async ValueTask WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        while (!source.IsEmpty)
        {
            source = source[await socket.SendAsync(source, SocketFlags.None, cancellationToken)..];
        }
    }

    public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => ReadAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

    public override Task FlushAsync(CancellationToken cancellationToken) => Task.CompletedTask;

    public override void Flush()
    {
    }

    public override int Read(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override void Write(byte[] buffer, int offset, int count) => throw new NotSupportedException();

    public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

    public override void SetLength(long value) => throw new NotSupportedException();

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            socket.Dispose();
        }

        base.Dispose(disposing);
    }
}
