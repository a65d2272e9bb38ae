using System.Buffers;
using System.IO.Compression;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>
/// The three content codings (RFC 9110 §8.4.1): their tokens, sidecar extensions, the settings
/// each is produced with, and a decoder for each to check sidecars and cached copies.
/// </summary>
internal static class Encoders
{
    /// <summary>Brotli's highest quality: slow to encode, as fast as any to decode, and done once.</summary>
    public const int BrotliQuality = 11;

    /// <summary>
    /// Brotli's quality in the first pass: at 5 it encodes text at tens of megabytes a second,
    /// and its output is only somewhat larger than quality 11's (docs/performance.md,
    /// "Compression threads").
    /// </summary>
    public const int FastBrotliQuality = 5;

    /// <summary>zstd's level in the first pass: its own default, hundreds of megabytes a second.</summary>
    public const int FastZstdLevel = 3;

    // RFC 7932 §9.1: the window holds (1 << WBITS) - 16 bytes, WBITS from 10 to 24.
    private const int MinBrotliWindow = 10;
    private const int MaxBrotliWindow = 24;

    public const string SupportedTokens = "br, zstd, gzip";

    /// <summary>The coding a Content-Encoding token names (tokens are case-insensitive, RFC 9110 §8.4.1).</summary>
    public static bool TryParse(string? token, out ContentCoding coding)
    {
        coding = token?.ToLowerInvariant() switch
        {
            "br" => ContentCoding.Brotli,
            "zstd" => ContentCoding.Zstd,
            "gzip" => ContentCoding.Gzip,
            _ => ContentCoding.Identity,
        };
        return coding != ContentCoding.Identity;
    }

    public static string Token(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => "br",
        ContentCoding.Zstd => "zstd",
        ContentCoding.Gzip => "gzip",
        _ => throw new ArgumentOutOfRangeException(nameof(coding)),
    };

    /// <summary>The extension of a precompressed file beside its source, as the usual tools name them.</summary>
    public static string SidecarExtension(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => ".br",
        ContentCoding.Zstd => ".zst",
        ContentCoding.Gzip => ".gz",
        _ => throw new ArgumentOutOfRangeException(nameof(coding)),
    };

    /// <summary>
    /// The suffix of a cache file: the coding and the level it was made at, then the format
    /// version, so a change of either makes old cache files miss instead of being served. Only
    /// final-quality bytes are kept on disk: a first-pass variant is replaced within minutes.
    /// </summary>
    public static string CacheSuffix(ContentCoding coding) => coding switch
    {
        ContentCoding.Brotli => "br.11.v1",
        ContentCoding.Zstd => "zstd.19.v1",
        ContentCoding.Gzip => "gzip.9.v1",
        _ => throw new ArgumentOutOfRangeException(nameof(coding)),
    };

    /// <summary>
    /// Encodes at the settings of <paramref name="pass"/>: Brotli 5, zstd 3 and gzip 6 in the
    /// first pass; Brotli 11, zstd 19 and gzip 9 in the final one.
    /// </summary>
    public static byte[] Encode(ContentCoding coding, ReadOnlySpan<byte> source, CompressionPass pass = CompressionPass.Final) => coding switch
    {
        ContentCoding.Brotli => EncodeBrotli(source, pass == CompressionPass.Final ? BrotliQuality : FastBrotliQuality),
        ContentCoding.Zstd => Zstd.Compress(source, pass == CompressionPass.Final ? Zstd.Level : FastZstdLevel),
        ContentCoding.Gzip => EncodeGzip(source, pass == CompressionPass.Final ? CompressionLevel.SmallestSize : CompressionLevel.Optimal),
        _ => throw new ArgumentOutOfRangeException(nameof(coding)),
    };

    /// <summary>
    /// A read-only stream of the bytes <paramref name="encoded"/> (left open) decodes to; it
    /// throws <see cref="InvalidDataException"/> on bad or truncated data. gzip decodes
    /// concatenated members (RFC 1952 §2.2) and, like gunzip and Chromium, ignores bytes after
    /// the last one; the decoded length and hash are checked by the caller.
    /// </summary>
    public static Stream OpenDecoder(ContentCoding coding, Stream encoded) => coding switch
    {
        ContentCoding.Brotli => new BrotliDecoderStream(encoded),
        ContentCoding.Zstd => Zstd.OpenDecoder(encoded, leaveOpen: true),
        ContentCoding.Gzip => new GZipStream(encoded, CompressionMode.Decompress, leaveOpen: true),
        _ => throw new ArgumentOutOfRangeException(nameof(coding)),
    };

    /// <summary>
    /// The smallest window that holds the whole file: the same output as the largest window,
    /// with less memory asked of every client that decodes it.
    /// </summary>
    public static int BrotliWindow(long length)
    {
        var window = MinBrotliWindow;
        while (window < MaxBrotliWindow && (1L << window) - 16 < length)
        {
            window++;
        }

        return window;
    }

    private static byte[] EncodeBrotli(ReadOnlySpan<byte> source, int quality)
    {
        var buffer = ArrayPool<byte>.Shared.Rent(BrotliEncoder.GetMaxCompressedLength(source.Length));
        try
        {
            if (!BrotliEncoder.TryCompress(source, buffer, out var written, quality, BrotliWindow(source.Length)))
            {
                throw new InvalidOperationException("Brotli could not compress into its own maximum compressed length.");
            }

            return buffer.AsSpan(0, written).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    private static byte[] EncodeGzip(ReadOnlySpan<byte> source, CompressionLevel level)
    {
        using var output = new MemoryStream(source.Length / 4 + 64);
        using (var gzip = new GZipStream(output, level, leaveOpen: true))
        {
            gzip.Write(source);
        }

        return output.ToArray();
    }
}

/// <summary>
/// The two passes of compression: a fast one over every file, so that a large site is served
/// compressed within seconds of start, then the final one at the best ratio, in the background.
/// </summary>
internal enum CompressionPass
{
    Fast,
    Final,
}
