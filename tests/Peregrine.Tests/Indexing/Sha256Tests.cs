using System.Security.Cryptography;
using System.Text;
using Peregrine.Indexing;

namespace Peregrine.Tests.Indexing;

/// <summary>
/// The managed SHA-256 and <see cref="ContentHash"/> give the platform's SHA-256 for every
/// length around the block and padding boundaries, however the bytes are fed.
/// </summary>
public sealed class Sha256Tests
{
    private static byte[] Bytes(int length)
    {
        var bytes = new byte[length];
        new Random(length).NextBytes(bytes);
        return bytes;
    }

    public static TheoryData<int> Lengths() =>
        [0, 1, 3, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000, 4096, 65_537, 1_000_003];

    [Fact]
    public void HashData_KnownAnswers_FromFips180()
    {
        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        Sha256.HashData("abc"u8, hash);
        Assert.Equal("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", Convert.ToHexString(hash));
        Sha256.HashData("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"u8, hash);
        Assert.Equal("248D6A61D20638B8E5C026930C3E6039A33CE45964FF2167F6ECEDD419DB06C1", Convert.ToHexString(hash));
        Sha256.HashData([], hash);
        Assert.Equal("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855", Convert.ToHexString(hash));
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void HashData_OneCall_MatchesPlatform(int length)
    {
        var bytes = Bytes(length);
        Span<byte> hash = stackalloc byte[Sha256.HashSizeInBytes];
        Sha256.HashData(bytes, hash);
        Assert.Equal(SHA256.HashData(bytes), hash.ToArray());
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void Append_UnevenPieces_MatchesPlatform(int length)
    {
        var bytes = Bytes(length);
        var sha = new Sha256();
        var random = new Random(length + 1);
        for (var offset = 0; offset < length;)
        {
            var piece = Math.Min(random.Next(0, 200), length - offset);
            sha.Append(bytes.AsSpan(offset, piece));
            offset += piece;
        }

        var hash = new byte[Sha256.HashSizeInBytes];
        sha.Finish(hash);
        Assert.Equal(SHA256.HashData(bytes), hash);
    }

    [Fact]
    public void Finish_ResetsForTheNextHash()
    {
        var sha = new Sha256();
        var first = new byte[Sha256.HashSizeInBytes];
        var second = new byte[Sha256.HashSizeInBytes];
        sha.Append("not this"u8);
        sha.Finish(first);
        sha.Append("abc"u8);
        sha.Finish(second);
        Assert.Equal(SHA256.HashData("abc"u8), second);
    }

    [Theory]
    [MemberData(nameof(Lengths))]
    public void ContentHash_SpanStreamAndPieces_MatchPlatform(int length)
    {
        var bytes = Bytes(length);
        var expected = SHA256.HashData(bytes);

        var fromSpan = new byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(bytes, fromSpan);
        Assert.Equal(expected, fromSpan);

        var fromStream = new byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(new MemoryStream(bytes), fromStream);
        Assert.Equal(expected, fromStream);

        using var incremental = new ContentHash.Incremental(length);
        incremental.Append(bytes.AsSpan(0, length / 3));
        incremental.Append(bytes.AsSpan(length / 3));
        Assert.Equal(expected, incremental.Finish());
    }

    [Fact]
    public void ContentHash_PastTheManagedBudget_StillMatchesPlatform()
    {
        // More than the budget in one stream: whichever code hashes it, and whatever the other
        // tests have already spent of the budget, the bytes are SHA-256's.
        var bytes = new byte[ContentHash.ManagedBudget + 4097];
        new Random(7).NextBytes(bytes.AsSpan(0, 1 << 20));
        var expected = SHA256.HashData(bytes);
        var hash = new byte[Sha256.HashSizeInBytes];
        ContentHash.HashData(bytes, hash);
        Assert.Equal(expected, hash);
        ContentHash.HashData(new MemoryStream(bytes), hash);
        Assert.Equal(expected, hash);
    }

    [Fact]
    public void EntityTag_Compute_IsTheFirst128BitsOfSha256()
    {
        var bytes = Encoding.UTF8.GetBytes("<!doctype html><title>t</title>");
        var expected = "\"" + Convert.ToBase64String(SHA256.HashData(bytes)[..16]).TrimEnd('=').Replace('+', '-').Replace('/', '_') + "\"";
        Assert.Equal(expected, EntityTag.Compute(bytes));
        Assert.Equal(expected, EntityTag.Compute(new MemoryStream(bytes)));
    }
}
