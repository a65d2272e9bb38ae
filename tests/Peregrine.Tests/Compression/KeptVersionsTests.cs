using System.Security.Cryptography;
using Peregrine.Compression;
using Peregrine.Indexing;

namespace Peregrine.Tests.Compression;

/// <summary>The versions kept as dictionaries: per asset, in bytes, and within the memory budget.</summary>
public sealed class KeptVersionsTests
{
    [Fact]
    public void Asset_KeepsAtMostMaxVersions_NewestLast()
    {
        var budget = new MemoryBudget(1 << 20);
        var kept = new KeptVersions(new DictionaryOptions { MaxVersions = 3 }, budget);

        for (var i = 0; i < 5; i++)
        {
            Assert.True(kept.Keep("/app-*.js", Hash(i), Bytes(i, 100)));
        }

        Assert.Equal([Hash(2), Hash(3), Hash(4)], kept.Of("/app-*.js").Select(v => v.Sha256));
        Assert.Equal(300, kept.Bytes);
        Assert.Equal(300, budget.Used);
    }

    [Fact]
    public void SameBytesAgain_AreKeptOnce()
    {
        var kept = new KeptVersions(new DictionaryOptions(), new MemoryBudget(1 << 20));

        kept.Keep("/app-*.js", Hash(1), Bytes(1, 100));
        kept.Keep("/app-*.js", Hash(1), Bytes(1, 100));

        Assert.Single(kept.Of("/app-*.js"));
    }

    [Fact]
    public void MaxBytes_DropsTheOldestOfAnyAssetFirst()
    {
        var kept = new KeptVersions(new DictionaryOptions { MaxBytes = 250 }, new MemoryBudget(1 << 20));

        kept.Keep("/a-*.js", Hash(1), Bytes(1, 100));
        kept.Keep("/b-*.js", Hash(2), Bytes(2, 100));
        kept.Keep("/b-*.js", Hash(3), Bytes(3, 100));

        Assert.Empty(kept.Of("/a-*.js"));
        Assert.Equal(2, kept.Of("/b-*.js").Count);
        Assert.False(kept.Keep("/c-*.js", Hash(4), Bytes(4, 300)));
    }

    [Fact]
    public void MemoryBudget_IsReservedAndGivenBack()
    {
        var budget = new MemoryBudget(250);
        var kept = new KeptVersions(new DictionaryOptions(), budget);

        kept.Keep("/a-*.js", Hash(1), Bytes(1, 100));
        kept.Keep("/b-*.js", Hash(2), Bytes(2, 100));
        kept.Keep("/c-*.js", Hash(3), Bytes(3, 100));

        Assert.Equal(200, budget.Used);
        Assert.Empty(kept.Of("/a-*.js"));
        kept.Clear();
        Assert.Equal(0, budget.Used);
    }

    [Theory]
    [InlineData(1_000, 1_000, 11)]
    [InlineData(80_000, 80_000, 18)]
    [InlineData(8_000_000, 8_000_000, 23)]
    [InlineData(20_000_000, 20_000_000, 25)]
    [InlineData(100_000_000, 1_000, 27)]
    public void WindowLog_CoversDictionaryAndFile_WithinChromiumsLimit(long dictionary, long source, int windowLog)
    {
        Assert.Equal(windowLog, Zstd.DczWindowLog(dictionary, source));
    }

    [Fact]
    public void Dcz_DecodesAgainstItsDictionary_AndNotAgainstAnother()
    {
        var old = Bytes(1, 20_000);
        var next = (byte[])old.Clone();
        next[10_000] ^= 0xFF;
        var hash = SHA256.HashData(old);

        var dcz = Zstd.CompressDcz(next, old, hash);

        Assert.True(dcz.Length < 200, $"{dcz.Length} bytes");
        Assert.True(Zstd.DczDecodesTo(dcz, old, hash, next));
        Assert.False(Zstd.DczDecodesTo(dcz, Bytes(2, 20_000), hash, next));
        Assert.False(Zstd.DczDecodesTo(dcz, old, SHA256.HashData(next), next));
    }

    private static byte[] Hash(int i) => SHA256.HashData(Bytes(i, 100));

    private static byte[] Bytes(int seed, int length)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
