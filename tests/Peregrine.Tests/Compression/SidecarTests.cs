using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Tests.Platform;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

public sealed class SidecarTests : IDisposable
{
    private readonly CompressionHarness _harness = new();

    [Theory]
    [InlineData("br", ".br")]
    [ZstdData("zstd", ".zst")]
    [InlineData("gzip", ".gz")]
    public async Task FreshValidSidecar_IsServedAsItIs(string token, string extension)
    {
        _harness.Options.Compression.Encodings = [token];
        var source = CompressibleText();
        var path = _harness.Tree.Write("app.js", source);
        var sidecar = EncodeQuickly(Coding(token), source);
        File.WriteAllBytes(path + extension, sidecar);

        var snapshot = _harness.Index();
        using var compressor = await _harness.CompressAll(snapshot);

        var variant = _harness.Find(snapshot, "/app.js").Encoded!.Get(Coding(token))!;
        Assert.Equal(sidecar, BytesOf(variant));
        Assert.Equal(EntityTag.Compute(sidecar), variant.ETag.ToString());
        Assert.Equal(0, compressor.Compressions);
        Assert.Equal(1, compressor.SidecarsUsed);
    }

    [Fact]
    public async Task SidecarOfAFileNotInMemory_IsReadFromTheSidecarFile()
    {
        _harness.Options.MaxCachedFileSize = 0;
        _harness.Options.Compression.Encodings = ["gzip"];
        var source = CompressibleText();
        var path = _harness.Tree.Write("app.js", source);
        File.WriteAllBytes(path + ".gz", EncodeQuickly(ContentCoding.Gzip, source));
        var budget = new MemoryBudget(long.MaxValue);

        var variant = (await _harness.IndexAndCompress("/app.js", budget)).Encoded!.Gzip!;

        Assert.Null(variant.Content);
        Assert.EndsWith("app.js.gz", variant.PhysicalPath);
        Assert.Equal(new FileInfo(path + ".gz").Length, variant.Length);
        Assert.Equal(0, budget.Used);
    }

    [Theory]
    [InlineData("br", ".br")]
    [ZstdData("zstd", ".zst")]
    [InlineData("gzip", ".gz")]
    public async Task SidecarOlderThanTheFile_IsIgnoredAndTheFileCompressed(string token, string extension)
    {
        _harness.Options.Compression.Encodings = [token];
        var source = CompressibleText();
        var path = _harness.Tree.Write("app.js", source);
        var sidecar = EncodeQuickly(Coding(token), source);
        File.WriteAllBytes(path + extension, sidecar);
        File.SetLastWriteTimeUtc(path + extension, new DateTime(2000, 1, 1, 0, 0, 0, DateTimeKind.Utc));

        var snapshot = _harness.Index();
        using var compressor = await _harness.CompressAll(snapshot);

        var variant = _harness.Find(snapshot, "/app.js").Encoded!.Get(Coding(token))!;
        Assert.NotEqual(sidecar, BytesOf(variant));
        Assert.Equal(source, Decode(Coding(token), BytesOf(variant)));
        Assert.Equal(1, compressor.Compressions);
        Assert.Equal(1, _harness.Logger.Count(24));
    }

    // Each kind of bad sidecar, for each coding: it is never served, and the file is compressed.
    [Theory]
    [InlineData("br", "garbage")]
    [InlineData("br", "truncated")]
    [InlineData("br", "other bytes")]
    [InlineData("br", "longer")]
    [InlineData("br", "trailing bytes")]
    [ZstdData("zstd", "garbage")]
    [ZstdData("zstd", "truncated")]
    [ZstdData("zstd", "other bytes")]
    [ZstdData("zstd", "longer")]
    [ZstdData("zstd", "trailing bytes")]
    [InlineData("gzip", "garbage")]
    [InlineData("gzip", "truncated")]
    [InlineData("gzip", "other bytes")]
    [InlineData("gzip", "longer")]
    public async Task InvalidSidecar_IsIgnoredAndTheFileCompressed(string token, string damage)
    {
        var coding = Coding(token);
        _harness.Options.Compression.Encodings = [token];
        var source = CompressibleText();
        var path = _harness.Tree.Write("app.js", source);
        var sidecar = damage switch
        {
            "garbage" => RandomBytes(600),
            "truncated" => EncodeQuickly(coding, source)[..^40],
            "other bytes" => EncodeQuickly(coding, CompressibleText("x")),
            "trailing bytes" => [.. EncodeQuickly(coding, source), 1, 2, 3, 4],
            // Decodes to the file and then some (HostileSidecarTests has a real bomb).
            _ => EncodeQuickly(coding, [.. source, .. new byte[100_000]]),
        };
        File.WriteAllBytes(path + Encoders.SidecarExtension(coding), sidecar);

        var snapshot = _harness.Index();
        using var compressor = await _harness.CompressAll(snapshot);

        var variant = _harness.Find(snapshot, "/app.js").Encoded!.Get(coding)!;
        Assert.NotEqual(sidecar, BytesOf(variant));
        Assert.Equal(source, Decode(coding, BytesOf(variant)));
        Assert.Equal(1, compressor.Compressions);
        Assert.Equal(0, compressor.SidecarsUsed);
        Assert.Equal(1, _harness.Logger.Count(25));
    }

    [Fact]
    public async Task InvalidSidecar_IsWarnedAboutOnce()
    {
        _harness.Options.Compression.Encodings = ["gzip"];
        var path = _harness.Tree.Write("app.js", CompressibleText());
        File.WriteAllBytes(path + ".gz", RandomBytes(600));
        using var compressor = new Compressor(_harness.Options.Compression, new MemoryBudget(long.MaxValue), _harness.Logger);

        // Two indexes give two entries for the one file, as a rebuild does. Bounded: a worker
        // stuck on the bad sidecar would otherwise hang the test rather than fail it.
        compressor.Enqueue(_harness.Find(_harness.Index(), "/app.js"));
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(10));
        compressor.Enqueue(_harness.Find(_harness.Index(), "/app.js"));
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(10));

        Assert.Equal(2, compressor.FilesProcessed);
        Assert.Equal(1, _harness.Logger.Count(25));
    }

    [Fact]
    public async Task SidecarThatSavesTooLittle_IsNotServed()
    {
        _harness.Options.Compression.Encodings = ["gzip"];
        var path = _harness.Tree.Write("noise.txt", RandomBytes(4096));
        File.WriteAllBytes(path + ".gz", EncodeQuickly(ContentCoding.Gzip, RandomBytes(4096)));

        var entry = await _harness.IndexAndCompress("/noise.txt");

        Assert.Equal(ContentCodingSet.None, entry.Encoded!.Available);
    }

    public void Dispose() => _harness.Dispose();
}
