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
// request head, nothing else. Five ways under it:
//   socket   the stream reads and writes the socket (NetworkStream);
//   kestrel  it reads through Kestrel's socket transport (its receive loop and input pipe, as
//            under Kestrel's HttpsConnectionMiddleware) and writes the socket, as Peregrine's
//            Connections/Tls/EncryptedOutput does;
//   https    Kestrel's own: its socket transport (inline scheduling, as Peregrine's HTTP/1.1 TLS
//            connections), its connection and HttpsConnectionMiddleware, and a connection
//            middleware that answers from the TLS pipe, where Peregrine's fast path sits;
//   https-direct  the same, with the encrypted output sent to the socket from the TLS stream's
//            buffer (as Peregrine's Connections/Tls/EncryptedOutput does) rather than through Kestrel's
//            output pipe and send loop;
//   terminated  TLS ended below Kestrel: a listener of its own does the handshake (SslStream
//            over the socket) and hands Kestrel a connection whose transport is pipes over the
//            stream; Kestrel's connection (no HttpsConnectionMiddleware) and the same answer.
// bench/TlsBound/run measures them beside Peregrine and nginx. Not a server: no parsing, no
// timeouts, no limits; for measurement on 127.0.0.1 only.
//
//   peregrine-tls-bound socket|kestrel|https|https-direct|terminated PORT FILE CERT.pem KEY.pem
if (args.Length != 5 || args[0] is not ("socket" or "kestrel" or "https" or "https-direct" or "terminated"))
{
    Console.Error.WriteLine("usage: peregrine-tls-bound socket|kestrel|https|https-direct|terminated PORT FILE CERT.pem KEY.pem");
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

if (args[0] is "https" or "https-direct" or "terminated")
{
    var builder = WebApplication.CreateSlimBuilder();
    builder.Logging.ClearProviders();
    builder.WebHost.UseSockets(sockets => sockets.UnsafePreferInlineScheduling = true);
    if (args[0] == "terminated")
    {
        builder.Services.AddSingleton<IConnectionListenerFactory>(new TerminatingListenerFactory(options));
    }

    builder.WebHost.ConfigureKestrel(kestrel => kestrel.Listen(IPAddress.Loopback, port, listen =>
    {
        listen.Protocols = HttpProtocols.Http1;
        if (args[0] == "https-direct")
        {
            listen.Use(next => connection =>
            {
                var socket = connection.Features.Get<Microsoft.AspNetCore.Connections.Features.IConnectionSocketFeature>()!.Socket;
                connection.Transport = new Pipes(connection.Transport.Input, new DirectSocketWriter(socket));
                return next(connection);
            });
        }

        if (args[0] is "https" or "https-direct")
        {
            listen.UseHttps(https =>
            {
                https.ServerCertificate = certificate;
                https.SslProtocols = SslProtocols.Tls13;
            });
        }

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
                // A head ends with an empty line ("\r\n" alone): answer each.
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

/// <summary>Accepts, does the TLS handshake, and hands Kestrel a connection already decrypted.</summary>
internal sealed class TerminatingListenerFactory(SslServerAuthenticationOptions options) : IConnectionListenerFactory
{
    public ValueTask<IConnectionListener> BindAsync(EndPoint endpoint, CancellationToken cancellationToken = default)
    {
        var socket = new Socket(endpoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        socket.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        socket.Bind(endpoint);
        socket.Listen(1024);
        return new ValueTask<IConnectionListener>(new TerminatingListener(socket, options));
    }
}

internal sealed class TerminatingListener(Socket socket, SslServerAuthenticationOptions options) : IConnectionListener
{
    private readonly System.Threading.Channels.Channel<ConnectionContext> _ready = System.Threading.Channels.Channel.CreateUnbounded<ConnectionContext>();
    private Task? _accepting;

    public EndPoint EndPoint => socket.LocalEndPoint!;

    public async ValueTask<ConnectionContext?> AcceptAsync(CancellationToken cancellationToken = default)
    {
        _accepting ??= AcceptLoopAsync();
        try
        {
            return await _ready.Reader.ReadAsync(cancellationToken);
        }
        catch (System.Threading.Channels.ChannelClosedException)
        {
            return null;
        }
    }

    private async Task AcceptLoopAsync()
    {
        while (true)
        {
            Socket accepted;
            try
            {
                accepted = await socket.AcceptAsync();
            }
            catch (Exception e) when (e is SocketException or ObjectDisposedException)
            {
                _ready.Writer.TryComplete();
                return;
            }

            accepted.NoDelay = true;
            _ = HandshakeAsync(accepted);
        }
    }

    private async Task HandshakeAsync(Socket accepted)
    {
        var tls = new SslStream(new NetworkStream(accepted, ownsSocket: true));
        try
        {
            await tls.AuthenticateAsServerAsync(options);
        }
        catch (Exception e) when (e is IOException or AuthenticationException)
        {
            await tls.DisposeAsync();
            return;
        }

        var transport = new Pipes(
            PipeReader.Create(tls, new StreamPipeReaderOptions(bufferSize: 16384, minimumReadSize: 4096, useZeroByteReads: true)),
            PipeWriter.Create(tls, new StreamPipeWriterOptions(leaveOpen: true)));
        var connection = new Microsoft.AspNetCore.Connections.DefaultConnectionContext(Guid.NewGuid().ToString("N"), transport, transport)
        {
            LocalEndPoint = accepted.LocalEndPoint,
            RemoteEndPoint = accepted.RemoteEndPoint,
        };
        _ready.Writer.TryWrite(connection);
    }

    public ValueTask UnbindAsync(CancellationToken cancellationToken = default)
    {
        socket.Dispose();
        return ValueTask.CompletedTask;
    }

    public ValueTask DisposeAsync() => UnbindAsync();
}

/// <summary>A connection's transport made of a given input and output.</summary>
internal sealed class Pipes(PipeReader input, PipeWriter output) : IDuplexPipe
{
    public PipeReader Input { get; } = input;

    public PipeWriter Output { get; } = output;
}

/// <summary>Sends what the TLS stream writes straight to the socket, as Peregrine's Connections/Tls/EncryptedOutput does (without its error handling).</summary>
internal sealed class DirectSocketWriter(Socket socket) : PipeWriter
{
    private byte[] _buffer = new byte[4096];
    private int _buffered;

    public override void Advance(int bytes) => _buffered += bytes;

    public override Memory<byte> GetMemory(int sizeHint = 0)
    {
        if (_buffer.Length - _buffered < Math.Max(sizeHint, 1))
        {
            Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, _buffered + sizeHint));
        }

        return _buffer.AsMemory(_buffered);
    }

    public override Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;

    public override async ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
    {
        if (_buffered != 0)
        {
            source.Span.CopyTo(GetSpan(source.Length));
            Advance(source.Length);
            return await FlushAsync(cancellationToken);
        }

        while (!source.IsEmpty)
        {
            source = source[await socket.SendAsync(source, SocketFlags.None, cancellationToken)..];
        }

        return new FlushResult(false, false);
    }

    public override async ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
    {
        var sent = 0;
        while (sent < _buffered)
        {
            sent += await socket.SendAsync(_buffer.AsMemory(sent, _buffered - sent), SocketFlags.None, cancellationToken);
        }

        _buffered = 0;
        return new FlushResult(false, false);
    }

    public override void CancelPendingFlush()
    {
    }

    public override void Complete(Exception? exception = null)
    {
    }
}
