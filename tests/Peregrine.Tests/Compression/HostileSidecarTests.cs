using System.Diagnostics;
using System.IO.Compression;
using System.Runtime.Versioning;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Tests.Platform;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Sidecars made to hurt the server: each must be refused, and refused quickly. Every test here
/// is bounded in time, since the failure it guards against is work that does not end.
/// </summary>
[UnsupportedOSPlatform("windows")]
public sealed class HostileSidecarTests : IDisposable
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(3);

    // Far more than can be decoded and hashed within the bound: SHA-256 alone, at a few GB/s,
    // takes longer than that over 8 GiB.
    private const long BombLength = 8L << 30;

    private readonly CompressionHarness _harness = new();

    [Theory]
    [InlineData("br")]
    [ZstdData("zstd")]
    [InlineData("gzip")]
    public async Task DecompressionBomb_IsRefusedAfterDecodingNoMoreThanTheFileHolds(string token)
    {
        // 8 GiB of zeros in a sidecar smaller than its 10 MiB file, so that it passes the size
        // check and is decoded: decoding must stop one byte past the file's length.
        var coding = Coding(token);
        _harness.Options.Compression.Encodings = [token];
        _harness.Options.Compression.MaxFileSize = 1024; // No fallback encode of 10 MiB at quality 11.
        var path = _harness.Tree.Write("app.js", new byte[10 << 20]);
        var bomb = Bomb(coding);
        Assert.InRange(bomb.Length, 1, (10 << 20) * 9 / 10);
        File.WriteAllBytes(path + Encoders.SidecarExtension(coding), bomb);
        var entry = _harness.Find(_harness.Index(), "/app.js");
        using var compressor = new Compressor(_harness.Options.Compression, new MemoryBudget(long.MaxValue), _harness.Logger);

        var elapsed = await TimeToFirstPass(compressor, entry);

        Assert.True(elapsed < s_bound, $"took {elapsed.TotalMilliseconds} ms");
        Assert.Equal(ContentCodingSet.None, entry.Encoded!.Available);
        Assert.Contains(_harness.Logger.Events, e => e.EventId == 25 && e.Message.Contains("decodes to more bytes than the file holds", StringComparison.Ordinal));
    }

    [Theory]
    [NativeData("stat(2) to tell a FIFO from a file without opening it", "FIFO")]
    [InlineData("folder")]
    public async Task SidecarThatIsNotARegularFile_IsIgnoredWithoutBeingOpened(string kind)
    {
        // Opening a FIFO for reading blocks until a writer comes, which here is never: a worker
        // that opened it would hang, and the bound would fail the test.
        _harness.Options.Compression.Encodings = ["br"];
        var path = _harness.Tree.Write("app.js", CompressibleText());
        if (kind == "FIFO")
        {
            using var mkfifo = Process.Start("mkfifo", path + ".br");
            await mkfifo.WaitForExitAsync();
            Assert.Equal(0, mkfifo.ExitCode);
        }
        else
        {
            Directory.CreateDirectory(path + ".br");
        }

        var entry = _harness.Find(_harness.Index(), "/app.js");
        using var compressor = new Compressor(_harness.Options.Compression, new MemoryBudget(long.MaxValue), _harness.Logger);

        var elapsed = await TimeToFirstPass(compressor, entry);

        Assert.True(elapsed < s_bound, $"took {elapsed.TotalMilliseconds} ms");
        Assert.NotNull(entry.Encoded!.Brotli);
        Assert.Equal(0, compressor.SidecarsUsed);
        Assert.Equal(1, _harness.Logger.Count(25));
    }

    public void Dispose() => _harness.Dispose();

    /// <summary>
    /// Queues the entry and waits for its first pass, failing once the bound has passed twice
    /// over. Sidecars are read only there; the final pass that may follow runs at the lowest
    /// priority, so on a busy machine its time says nothing about the sidecar.
    /// </summary>
    private static async Task<TimeSpan> TimeToFirstPass(Compressor compressor, CatalogEntry entry)
    {
        var stopwatch = Stopwatch.StartNew();
        compressor.Enqueue(entry);
        var done = compressor.WhenFirstPassDone();
        Assert.Same(done, await Task.WhenAny(done, Task.Delay(s_bound * 2)));
        return stopwatch.Elapsed;
    }

    /// <summary>A stream that decodes to <see cref="BombLength"/> zero bytes, made of repeated members or frames where the coding allows.</summary>
    private static byte[] Bomb(ContentCoding coding)
    {
        const int Chunk = 64 << 20;
        using var output = new MemoryStream();
        if (coding == ContentCoding.Brotli)
        {
            // One stream (Brotli has no concatenation); long runs cost it next to nothing.
            using var brotli = new BrotliStream(output, new BrotliCompressionOptions { Quality = 1 }, leaveOpen: true);
            var zeros = new byte[1 << 20];
            for (long written = 0; written < BombLength; written += zeros.Length)
            {
                brotli.Write(zeros);
            }
        }
        else
        {
            // Concatenated members (RFC 1952 §2.2) or frames (RFC 8878 §3.1), each of 64 MiB.
            var piece = coding == ContentCoding.Zstd ? Zstd.Compress(new byte[Chunk], level: 1) : Gzip(new byte[Chunk]);
            for (long written = 0; written < BombLength; written += Chunk)
            {
                output.Write(piece);
            }
        }

        return output.ToArray();
    }

    private static byte[] Gzip(byte[] source)
    {
        using var output = new MemoryStream();
        using (var gzip = new GZipStream(output, CompressionLevel.SmallestSize, leaveOpen: true))
        {
            gzip.Write(source);
        }

        return output.ToArray();
    }
}
