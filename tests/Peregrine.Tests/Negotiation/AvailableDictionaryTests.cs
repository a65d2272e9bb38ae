using System.Diagnostics;
using System.Security.Cryptography;
using Microsoft.Extensions.Primitives;
using Peregrine.Negotiation;

namespace Peregrine.Tests.Negotiation;

/// <summary>The Available-Dictionary field (RFC 9842 §2.2, an RFC 8941 byte sequence) and dcz in Accept-Encoding.</summary>
public sealed class AvailableDictionaryTests
{
    private static readonly byte[] s_hash = SHA256.HashData("dictionary"u8);
    private static readonly string s_base64 = Convert.ToBase64String(s_hash);

    [Fact]
    public void ByteSequence_OfOneSha256_IsRead()
    {
        Span<byte> hash = stackalloc byte[32];

        Assert.True(AvailableDictionary.TryRead(":" + s_base64 + ":", hash));
        Assert.Equal(s_hash, hash.ToArray());
        Assert.True(AvailableDictionary.TryRead("  :" + s_base64 + ":  ", hash));
    }

    [Theory]
    [InlineData("")]
    [InlineData("::")]
    [InlineData("BASE")]
    [InlineData("\"{0}\"")]
    [InlineData("{0}")]
    [InlineData(":{0}")]
    [InlineData(":{0}:, :{0}:")]
    [InlineData(":{0}:;id=1")]
    [InlineData(":AAAA:")]
    [InlineData(":{0}AAAA:")]
    [InlineData(":-_{0}:")]
    public void Anything_ButOneByteSequenceOf32Bytes_IsRefused(string format)
    {
        Span<byte> hash = stackalloc byte[32];

        Assert.False(AvailableDictionary.TryRead(string.Format(System.Globalization.CultureInfo.InvariantCulture, format, s_base64), hash));
    }

    [Fact]
    public void TwoFieldLines_AreRefused()
    {
        Span<byte> hash = stackalloc byte[32];

        Assert.False(AvailableDictionary.TryRead(new StringValues([":" + s_base64 + ":", ":" + s_base64 + ":"]), hash));
        Assert.False(AvailableDictionary.TryRead(StringValues.Empty, hash));
    }

    [Fact]
    public void HostileLongValue_IsRefusedAtOnce()
    {
        var value = ":" + new string('A', 8 * 1024 * 1024) + ":";
        Span<byte> hash = stackalloc byte[32];
        var clock = Stopwatch.StartNew();

        Assert.False(AvailableDictionary.TryRead(value, hash));
        Assert.True(clock.Elapsed < TimeSpan.FromSeconds(1), $"took {clock.Elapsed}");
    }

    [Theory]
    [InlineData("gzip, deflate, br, zstd, dcb, dcz", true)]
    [InlineData("dcz;q=0.5", true)]
    [InlineData("DCZ", true)]
    [InlineData("dcz;q=0", false)]
    [InlineData("gzip, br, zstd", false)]
    [InlineData("*", false)]
    [InlineData("dcz;q=2", false)]
    [InlineData("dczz, xdcz", false)]
    [InlineData("", false)]
    public void Dcz_CountsOnlyWhenNamedWithAWeight(string acceptEncoding, bool accepted)
    {
        Assert.Equal(accepted, (AcceptEncoding.AcceptedDictionaryCodings(new StringValues(acceptEncoding)) & DictionaryCodings.Dcz) != 0);
        Assert.Equal(accepted, (AcceptEncoding.AcceptedDictionaryCodings(acceptEncoding.AsSpan()) & DictionaryCodings.Dcz) != 0);
    }

    [Theory]
    [InlineData("gzip, deflate, br, zstd, dcb, dcz", 3)]
    [InlineData("dcb", 2)]
    [InlineData("DCB;q=0.1, dcz;q=0", 2)]
    [InlineData("dcb;q=0, dcz", 1)]
    [InlineData("*, br", 0)]
    [InlineData("dcbb, xdcb", 0)]
    public void DictionaryCodings_EachCountsOnlyWhenNamedWithAWeight(string acceptEncoding, int codings)
    {
        var expected = (DictionaryCodings)codings;
        Assert.Equal(expected, AcceptEncoding.AcceptedDictionaryCodings(new StringValues(acceptEncoding)));
        Assert.Equal(expected, AcceptEncoding.AcceptedDictionaryCodings(acceptEncoding.AsSpan()));
    }
}
