using System.IO.Pipelines;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Peregrine.Send;

namespace Peregrine.Tests.Send;

/// <summary>
/// Bodies held in memory: over HTTP/2 (and HTTP/3) one larger than 64 KiB goes out a piece at a
/// time, each flushed before the next is copied, so that a stream holds one piece of the
/// connection's buffers rather than its whole body; over HTTP/1.1 it is written whole.
/// </summary>
public sealed class BodyPiecesTests
{
    private const int Piece = 64 * 1024;

    [Theory]
    [InlineData("HTTP/2")]
    [InlineData("HTTP/3")]
    public async Task LargeBody_OverAMultiplexedProtocol_IsFlushedAPieceAtATime(string protocol)
    {
        var body = Bytes(300_000);
        var (context, writer) = Context(protocol);

        await BodySender.WriteAsync(context.Response, body);

        Assert.Equal([Piece, Piece, Piece, Piece, 300_000 - (4 * Piece)], writer.Flushes);
        Assert.Equal(body, writer.Written.ToArray());
    }

    [Fact]
    public async Task LargeBody_OverHttp11_IsWrittenWhole()
    {
        var body = Bytes(300_000);
        var (context, writer) = Context("HTTP/1.1");

        await BodySender.WriteAsync(context.Response, body);

        Assert.Equal([300_000], writer.Flushes);
        Assert.Equal(body, writer.Written.ToArray());
    }

    [Fact]
    public async Task SmallBody_OverHttp2_IsLeftForKestrelToFlush()
    {
        var body = Bytes(Piece);
        var (context, writer) = Context("HTTP/2");

        await BodySender.WriteAsync(context.Response, body);

        Assert.Empty(writer.Flushes);
        Assert.Equal(body, writer.Written.ToArray());
    }

    [Fact]
    public async Task LargeBody_WhenTheClientIsGone_StopsAfterThePieceThatFoundItGone()
    {
        var body = Bytes(300_000);
        var (context, writer) = Context("HTTP/2");
        writer.CompletedAfter = 2;

        await BodySender.WriteAsync(context.Response, body);

        Assert.Equal([Piece, Piece], writer.Flushes);
    }

    [Fact]
    public async Task LargeBody_WhoseFlushesWait_IsWrittenWholeOnceTheyComplete()
    {
        var body = Bytes(200_000);
        var (context, writer) = Context("HTTP/2");
        writer.Asynchronous = true;

        var sending = BodySender.WriteAsync(context.Response, body);
        Assert.False(sending.IsCompleted);
        await sending.WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal([Piece, Piece, Piece, 200_000 - (3 * Piece)], writer.Flushes);
        Assert.Equal(body, writer.Written.ToArray());
    }

    private static byte[] Bytes(int length)
    {
        var bytes = new byte[length];
        new Random(length).NextBytes(bytes);
        return bytes;
    }

    private static (HttpContext Context, RecordingWriter Writer) Context(string protocol)
    {
        var writer = new RecordingWriter();
        var context = new DefaultHttpContext();
        context.Request.Protocol = protocol;
        context.Features.Set<IHttpResponseBodyFeature>(new WriterFeature(writer));
        return (context, writer);
    }

    private sealed class WriterFeature(PipeWriter writer) : IHttpResponseBodyFeature
    {
        public Stream Stream => Stream.Null;

        public PipeWriter Writer => writer;

        public void DisableBuffering()
        {
        }

        public Task StartAsync(CancellationToken cancellationToken = default) => Task.CompletedTask;

        public Task SendFileAsync(string path, long offset, long? count, CancellationToken cancellationToken = default) => throw new NotSupportedException();

        public Task CompleteAsync() => Task.CompletedTask;
    }

    /// <summary>Keeps what is written, and the bytes each flush carried.</summary>
    private sealed class RecordingWriter : PipeWriter
    {
        private readonly System.Buffers.ArrayBufferWriter<byte> _written = new();
        private int _unflushed;

        public List<int> Flushes { get; } = [];

        public ReadOnlyMemory<byte> Written => _written.WrittenMemory;

        /// <summary>After this many flushes, each reports the reader gone.</summary>
        public int CompletedAfter { get; set; } = int.MaxValue;

        /// <summary>Flushes complete later, as when the client has not read yet.</summary>
        public bool Asynchronous { get; set; }

        public override void Advance(int bytes)
        {
            _written.Advance(bytes);
            _unflushed += bytes;
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => _written.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => _written.GetSpan(sizeHint);

        public override void CancelPendingFlush()
        {
        }

        public override void Complete(Exception? exception = null)
        {
        }

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default)
        {
            Flushes.Add(_unflushed);
            _unflushed = 0;
            var result = new FlushResult(isCanceled: false, isCompleted: Flushes.Count >= CompletedAfter);
            return Asynchronous ? Later(result) : new ValueTask<FlushResult>(result);
        }

        private static async ValueTask<FlushResult> Later(FlushResult result)
        {
            await Task.Delay(10);
            return result;
        }
    }
}
