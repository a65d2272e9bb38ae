using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

public sealed class CompressionCacheTests : IDisposable
{
    private readonly CompressionHarness _harness = new();

    [Fact]
    public async Task ExhaustedBudget_WithoutACacheFolder_DropsTheVariants()
    {
        _harness.Tree.Write("index.html", CompressibleText());

        var entry = await _harness.IndexAndCompress("/index.html", new MemoryBudget(0));

        Assert.NotNull(entry.Encoded);
        Assert.Equal(ContentCodingSet.None, entry.Encoded.Available);
    }

    [Fact]
    public async Task ExhaustedBudget_WithACacheFolder_ServesFromTheCacheFile()
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        var source = CompressibleText();
        _harness.Tree.Write("index.html", source);

        var entry = await _harness.IndexAndCompress("/index.html", new MemoryBudget(0));

        var variant = entry.Encoded!.Brotli!;
        Assert.Null(variant.Content);
        Assert.StartsWith(_harness.CacheDirectory, variant.PhysicalPath);
        Assert.Equal(source, Decode(ContentCoding.Brotli, BytesOf(variant)));
        Assert.Equal(EntityTag.Compute(BytesOf(variant)), variant.ETag.ToString());
    }

    [Fact]
    public async Task FileNotInMemory_HasItsVariantsServedFromTheCacheFolder()
    {
        _harness.Options.MaxCachedFileSize = 0;
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        _harness.Tree.Write("index.html", CompressibleText());
        var budget = new MemoryBudget(long.MaxValue);

        var entry = await _harness.IndexAndCompress("/index.html", budget);

        Assert.NotNull(entry.Encoded!.Gzip!.PhysicalPath);
        Assert.Equal(0, budget.Used);
    }

    [Fact]
    public async Task CacheFile_IsNamedByContentHashCodingAndLevel()
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        _harness.Tree.Write("index.html", CompressibleText());

        var entry = await _harness.IndexAndCompress("/index.html");

        var tag = entry.Identity.ETag.ToString().Trim('"');
        var names = Directory.GetFiles(_harness.CacheDirectory).Select(Path.GetFileName).Order().ToArray();
        var expected = new[] { $"{tag}.br.11.v1", $"{tag}.gzip.9.v1", $"{tag}.zstd.19.v1" }
            .Where(name => Zstd.IsAvailable || !name.Contains("zstd"))
            .Order();
        Assert.Equal(expected, names);
    }

    [Fact]
    public async Task CacheFolder_LetsTheNextRunReuseTheBytesWithoutCompressing()
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        var source = CompressibleText();
        _harness.Tree.Write("index.html", source);
        var first = _harness.Index();
        using var firstRun = await _harness.CompressAll(first);

        var second = _harness.Index();
        using var secondRun = await _harness.CompressAll(second);

        Assert.Equal(firstRun.Codings.Count, firstRun.Compressions);
        Assert.Equal(0, secondRun.Compressions);

        // The cached final bytes are used as they are: no fast pass, nothing left to upgrade.
        Assert.Equal(0, secondRun.FastCompressions);
        Assert.Equal(0, secondRun.FilesUpgraded);
        Assert.Equal(secondRun.Codings.Count, secondRun.CacheHits);
        var before = _harness.Find(first, "/index.html").Encoded!;
        var after = _harness.Find(second, "/index.html").Encoded!;
        Assert.Equal(before.Available, after.Available);
        Assert.Equal(BytesOf(before.Brotli!), BytesOf(after.Brotli!));
        Assert.Equal(before.Brotli!.ETag, after.Brotli!.ETag);
    }

    [Fact]
    public async Task IncompressibleFile_IsRememberedSoTheNextRunDoesNotTryAgain()
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        _harness.Tree.Write("noise.txt", RandomBytes(4096));
        using var firstRun = await _harness.CompressAll(_harness.Index());

        var second = _harness.Index();
        using var secondRun = await _harness.CompressAll(second);

        Assert.Equal(0, secondRun.Compressions);
        Assert.Equal(0, secondRun.FastCompressions);
        Assert.Equal(ContentCodingSet.None, _harness.Find(second, "/noise.txt").Encoded!.Available);
    }

    [Theory]
    [InlineData("truncated")]
    [InlineData("garbage")]
    [InlineData("other bytes")]
    [InlineData("empty of a different coding")]
    public async Task DamagedCacheFile_IsFoundAndCompressedAgain(string damage)
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        _harness.Options.Compression.Encodings = ["br"];
        var source = CompressibleText();
        _harness.Tree.Write("index.html", source);
        var entry = _harness.Find(_harness.Index(), "/index.html");
        var cacheFile = Path.Combine(_harness.CacheDirectory, entry.Identity.ETag.ToString().Trim('"') + ".br.11.v1");
        Directory.CreateDirectory(_harness.CacheDirectory);
        File.WriteAllBytes(cacheFile, damage switch
        {
            "truncated" => EncodeQuickly(ContentCoding.Brotli, source)[..^20],
            "garbage" => RandomBytes(500),
            "other bytes" => EncodeQuickly(ContentCoding.Brotli, CompressibleText("x")),
            _ => EncodeQuickly(ContentCoding.Gzip, source),
        });

        var snapshot = _harness.Index();
        using var compressor = await _harness.CompressAll(snapshot);

        var variant = _harness.Find(snapshot, "/index.html").Encoded!.Brotli!;
        Assert.Equal(source, Decode(ContentCoding.Brotli, BytesOf(variant)));
        Assert.Equal(1, compressor.Compressions);
        Assert.Equal(1, _harness.Logger.Count(29));
        Assert.Equal(BytesOf(variant), File.ReadAllBytes(cacheFile));
    }

    [Fact]
    public async Task CacheWrites_LeaveNoTemporaryFilesBehind()
    {
        _harness.Options.Compression.CacheDirectory = _harness.CacheDirectory;
        _harness.Tree.Write("a.html", CompressibleText("a"));
        _harness.Tree.Write("b.html", CompressibleText("b"));

        using var compressor = await _harness.CompressAll(_harness.Index());

        Assert.Empty(Directory.GetFiles(_harness.CacheDirectory, "*.tmp"));
    }

    public void Dispose() => _harness.Dispose();
}
