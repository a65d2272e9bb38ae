using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Connections.Tls;
using Peregrine.Http1;

namespace Peregrine.Tests.Http1;

/// <summary>
/// The fast path's TLS output (<see cref="TlsRecordWriter"/>) lends a long body to the TLS stream
/// from the body's own array rather than copying it into its buffers. What reaches the stream must
/// not change: the same bytes in the same order, in writes of the same sizes, so the same TLS
/// records. Each case writes a head, a piece of a body and a second head, once lent and once
/// copied, each over a TLS connection of its own, and compares what the client reads and the sizes
/// of the encrypted writes under the TLS stream.
/// </summary>
public sealed class TlsRecordWriterTests : IDisposable
{
    private const int HeadLength = 300;

    private readonly TempTree _tree = new();
    private readonly X509Certificate2 _certificate;

    public TlsRecordWriterTests()
    {
        var files = new TestCertificate(_tree.Root);
        _certificate = X509CertificateLoader.LoadPkcs12FromFile(files.PfxPath, TestCertificate.PfxPassword);
    }

    public void Dispose()
    {
        _certificate.Dispose();
        _tree.Dispose();
    }

    [Theory]
    [InlineData(0, 100)] // fits the head's buffer: copied either way
    [InlineData(0, TlsRecordWriter.BufferSize - HeadLength)] // fills the head's buffer exactly: nothing to lend
    [InlineData(7, TlsRecordWriter.BufferSize - HeadLength + 1)] // one byte past it: still less than a buffer to lend
    [InlineData(0, (3 * TlsRecordWriter.BufferSize) - HeadLength)] // ends on a buffer's end: nothing after the lent part
    [InlineData(0, 427_008)]
    [InlineData(1_000, 300_001)] // a byte range from inside the body
    public async Task WriteBody_ReachesTheStreamAsACopyWould(int start, int length)
    {
        var body = RandomNumberGenerator.GetBytes(start + length + 50);
        var head = RandomNumberGenerator.GetBytes(HeadLength);
        var next = RandomNumberGenerator.GetBytes(200);
        byte[] expected = [.. head, .. body.AsSpan(start, length), .. next];

        var lent = await RunAsync(writer =>
        {
            writer.Write<byte>(head);
            writer.WriteBody(body, start, length);
            Assert.Equal(expected.Length - next.Length, writer.UnflushedBytes);
            writer.Write<byte>(next);
        }, expected.Length);
        var copied = await RunAsync(writer =>
        {
            writer.Write<byte>(head);
            writer.Write<byte>(body.AsSpan(start, length));
            writer.Write<byte>(next);
        }, expected.Length);

        Assert.True(expected.AsSpan().SequenceEqual(lent.Received));
        Assert.True(expected.AsSpan().SequenceEqual(copied.Received));
        Assert.Equal(copied.Writes, lent.Writes);
    }

    [Fact]
    public async Task WriteBody_TwoResponsesInOneFlush_InOrder()
    {
        var first = RandomNumberGenerator.GetBytes(200_000);
        var second = RandomNumberGenerator.GetBytes(150_000);
        var head = RandomNumberGenerator.GetBytes(HeadLength);
        byte[] expected = [.. head, .. first, .. head, .. second];

        var lent = await RunAsync(writer =>
        {
            writer.Write<byte>(head);
            writer.WriteBody(first, 0, first.Length);
            writer.Write<byte>(head);
            writer.WriteBody(second, 0, second.Length);
        }, expected.Length);

        Assert.True(expected.AsSpan().SequenceEqual(lent.Received));
    }

    // Writes through a TlsRecordWriter over a TLS connection on loopback, flushes once, and
    // returns what the client read and the sizes of the writes under the server's SslStream.
    private async Task<(byte[] Received, List<int> Writes)> RunAsync(Action<TlsRecordWriter> write, int expectedLength)
    {
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        listener.Listen(1);
        using var clientSocket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        await clientSocket.ConnectAsync(listener.LocalEndPoint!);
        using var serverSocket = await listener.AcceptAsync();

        var recording = new RecordingStream(new NetworkStream(serverSocket, ownsSocket: false));
        await using var server = new SslStream(recording);
        await using var client = new SslStream(new NetworkStream(clientSocket, ownsSocket: false));
        await Task.WhenAll(
            server.AuthenticateAsServerAsync(new SslServerAuthenticationOptions { ServerCertificate = _certificate }),
            client.AuthenticateAsClientAsync(new SslClientAuthenticationOptions { TargetHost = "localhost", RemoteCertificateValidationCallback = (_, _, _, _) => true }));
        recording.Writes.Clear();

        var received = new byte[expectedLength];
        var reading = client.ReadExactlyAsync(received).AsTask();
        var writer = new TlsRecordWriter(server);
        write(writer);
        var result = await writer.FlushAsync();
        Assert.False(result.IsCanceled);
        Assert.False(result.IsCompleted);
        Assert.Equal(0, writer.UnflushedBytes);
        await reading.WaitAsync(TimeSpan.FromSeconds(30));
        writer.Complete();
        return (received, [.. recording.Writes]);
    }

    private sealed class RecordingStream(Stream inner) : Stream
    {
        public List<int> Writes { get; } = [];

        public override bool CanRead => true;

        public override bool CanSeek => false;

        public override bool CanWrite => true;

        public override long Length => throw new NotSupportedException();

        public override long Position { get => throw new NotSupportedException(); set => throw new NotSupportedException(); }

        public override void Flush() => inner.Flush();

        public override Task FlushAsync(CancellationToken cancellationToken) => inner.FlushAsync(cancellationToken);

        public override int Read(byte[] buffer, int offset, int count) => inner.Read(buffer, offset, count);

        public override ValueTask<int> ReadAsync(Memory<byte> buffer, CancellationToken cancellationToken = default) => inner.ReadAsync(buffer, cancellationToken);

        public override Task<int> ReadAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken) => inner.ReadAsync(buffer, offset, count, cancellationToken);

        public override long Seek(long offset, SeekOrigin origin) => throw new NotSupportedException();

        public override void SetLength(long value) => throw new NotSupportedException();

        public override void Write(byte[] buffer, int offset, int count)
        {
            Writes.Add(count);
            inner.Write(buffer, offset, count);
        }

        public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
        {
            Writes.Add(buffer.Length);
            return inner.WriteAsync(buffer, cancellationToken);
        }

        public override Task WriteAsync(byte[] buffer, int offset, int count, CancellationToken cancellationToken)
            => WriteAsync(buffer.AsMemory(offset, count), cancellationToken).AsTask();

        protected override void Dispose(bool disposing)
        {
            if (disposing)
            {
                inner.Dispose();
            }

            base.Dispose(disposing);
        }
    }
}
