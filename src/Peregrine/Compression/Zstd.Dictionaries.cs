using System.Buffers;
using Peregrine.Interop;

namespace Peregrine.Compression;

// The dcz content coding of RFC 9842 §4.2: a zstd frame made with the client's dictionary as
// raw-content prefix, after a 40-byte skippable frame that names the dictionary by its SHA-256.
internal static unsafe partial class Zstd
{
    /// <summary>The length of the dcz header: the skippable frame's magic and length, then the SHA-256.</summary>
    public const int DczHeaderLength = 40;

    /// <summary>
    /// RFC 9842 §4.2: magic 0x184D2A5E (a zstd skippable frame, RFC 8878 §3.1.2) and a
    /// frame length of 32, little-endian, so that a stock decoder skips the hash.
    /// </summary>
    private static ReadOnlySpan<byte> DczMagic => [0x5E, 0x2A, 0x4D, 0x18, 0x20, 0x00, 0x00, 0x00];

    /// <summary>
    /// The window log for a delta against a dictionary of <paramref name="dictionaryLength"/>
    /// bytes: large enough to reach back over the dictionary and the new bytes, never above
    /// what Chromium's decoder accepts, max(23, ⌈log2 dictionary⌉)
    /// (<c>net/filter/zstd_source_stream.cc</c>), which is tighter than RFC 9842 §4.2's
    /// 1.25 × dictionary.
    /// </summary>
    public static int DczWindowLog(long dictionaryLength, long sourceLength)
    {
        var limit = Math.Max(WindowLogMax, CeilingLog2(dictionaryLength));
        var wanted = Math.Max(10, CeilingLog2(dictionaryLength + sourceLength));
        return Math.Min(limit, wanted);
    }

    /// <summary>
    /// <paramref name="source"/> in the dcz coding against <paramref name="dictionary"/>, whose
    /// SHA-256 is <paramref name="dictionaryHash"/>: the header, then one frame that records the
    /// content size.
    /// </summary>
    public static byte[] CompressDcz(ReadOnlySpan<byte> source, ReadOnlySpan<byte> dictionary, ReadOnlySpan<byte> dictionaryHash, int level = Level)
    {
        if (dictionaryHash.Length != 32)
        {
            throw new ArgumentException("A dcz header names the dictionary by its 32-byte SHA-256.", nameof(dictionaryHash));
        }

        var context = LibZstd.ZSTD_createCCtx();
        if (context == 0)
        {
            throw new OutOfMemoryException("ZSTD_createCCtx failed.");
        }

        var bound = checked((int)LibZstd.ZSTD_compressBound((nuint)source.Length) + DczHeaderLength);
        var buffer = ArrayPool<byte>.Shared.Rent(bound);
        try
        {
            ThrowIfError(LibZstd.ZSTD_CCtx_setParameter(context, LibZstd.CompressionLevel, level));
            ThrowIfError(LibZstd.ZSTD_CCtx_setParameter(context, LibZstd.CompressionWindowLog, DczWindowLog(dictionary.Length, source.Length)));
            ThrowIfError(LibZstd.ZSTD_CCtx_setParameter(context, LibZstd.CompressionContentSizeFlag, 1));
            ThrowIfError(LibZstd.ZSTD_CCtx_setPledgedSrcSize(context, (ulong)source.Length));
            DczMagic.CopyTo(buffer);
            dictionaryHash.CopyTo(buffer.AsSpan(DczMagic.Length));
            nuint written;
            fixed (byte* prefix = dictionary)
            fixed (byte* input = source)
            fixed (byte* output = buffer)
            {
                // The prefix is referenced for this one frame and read while it is made.
                ThrowIfError(LibZstd.ZSTD_CCtx_refPrefix(context, prefix, (nuint)dictionary.Length));
                written = LibZstd.ZSTD_compress2(context, output + DczHeaderLength, (nuint)(bound - DczHeaderLength), input, (nuint)source.Length);
            }

            ThrowIfError(written);
            return buffer.AsSpan(0, DczHeaderLength + (int)written).ToArray();
        }
        finally
        {
            LibZstd.ZSTD_freeCCtx(context);
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>
    /// True when <paramref name="dcz"/> carries <paramref name="dictionaryHash"/> in its header
    /// and its frame, decoded against <paramref name="dictionary"/> under the window a browser
    /// allows, gives exactly <paramref name="expected"/>: a delta is checked once before it is
    /// served, as sidecars are.
    /// </summary>
    public static bool DczDecodesTo(ReadOnlySpan<byte> dcz, ReadOnlySpan<byte> dictionary, ReadOnlySpan<byte> dictionaryHash, ReadOnlySpan<byte> expected)
    {
        if (dcz.Length < DczHeaderLength || !dcz[..DczMagic.Length].SequenceEqual(DczMagic) || !dcz[DczMagic.Length..DczHeaderLength].SequenceEqual(dictionaryHash))
        {
            return false;
        }

        var context = LibZstd.ZSTD_createDCtx();
        if (context == 0)
        {
            throw new OutOfMemoryException("ZSTD_createDCtx failed.");
        }

        // One byte more than expected, so that a frame that decodes to more is caught.
        var output = ArrayPool<byte>.Shared.Rent(expected.Length + 1);
        try
        {
            ThrowIfError(LibZstd.ZSTD_DCtx_setParameter(context, LibZstd.DecompressionWindowLogMax, Math.Max(WindowLogMax, CeilingLog2(dictionary.Length))));
            nuint written;
            fixed (byte* prefix = dictionary)
            fixed (byte* input = dcz)
            fixed (byte* destination = output)
            {
                ThrowIfError(LibZstd.ZSTD_DCtx_refPrefix(context, prefix, (nuint)dictionary.Length));
                written = LibZstd.ZSTD_decompressDCtx(context, destination, (nuint)(expected.Length + 1), input + DczHeaderLength, (nuint)(dcz.Length - DczHeaderLength));
            }

            return LibZstd.ZSTD_isError(written) == 0 && output.AsSpan(0, (int)written).SequenceEqual(expected);
        }
        finally
        {
            LibZstd.ZSTD_freeDCtx(context);
            ArrayPool<byte>.Shared.Return(output);
        }
    }

    private static int CeilingLog2(long value) => value <= 1 ? 0 : 64 - (int)long.LeadingZeroCount(value - 1);
}
