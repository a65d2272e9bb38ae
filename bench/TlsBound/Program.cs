using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Microsoft.AspNetCore.Server.Kestrel.Transport.Sockets;
using Microsoft.Extensions.Logging.Abstractions;

// The least a managed HTTPS/1.1 server does per request: SslStream, one fixed response per
// request head, nothing else. Two ways under the TLS stream:
//   socket   the stream reads and writes the socket (NetworkStream);
//   kestrel  it reads through Kestrel's socket transport (its receive loop and input pipe, as
//            under Kestrel's HttpsConnectionMiddleware) and writes the socket, as Peregrine's
//            Tls/EncryptedOutput does.
// bench/TlsBound/run measures both beside Peregrine and nginx. Not a server: no parsing, no
// timeouts, no limits; for measurement on 127.0.0.1 only.
//
//   peregrine-tls-bound socket|kestrel PORT FILE CERT.pem KEY.pem
if (args.Length != 5 || args[0] is not ("socket" or "kestrel"))
{
    Console.Error.WriteLine("usage: peregrine-tls-bound socket|kestrel PORT FILE CERT.pem KEY.pem");
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
