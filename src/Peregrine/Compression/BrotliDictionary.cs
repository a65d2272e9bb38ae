using System.Buffers;
using Peregrine.Interop;

namespace Peregrine.Compression;

/// <summary>
/// The dcb content coding of RFC 9842 §4.1: a Brotli stream made with the client's dictionary as
/// a raw shared dictionary (brotli 1.1's <c>BrotliEncoderPrepareDictionary</c>), after a 36-byte
/// header that names the dictionary by its SHA-256. Only where <see cref="LibBrotli.IsUsable"/>:
/// the standalone server's Native AOT executable.
/// </summary>
internal static unsafe class BrotliDictionary
{
    /// <summary>The length of the dcb header: the magic, then the SHA-256.</summary>
    public const int HeaderLength = 36;

    /// <summary>Quality 11, as the br variants.</summary>
    public const int Quality = 11;

    /// <summary>
    /// The largest window the decoders accept without Brotli's large-window extension, 16 MiB
    /// (RFC 7932 §9.1); RFC 9842 §4.1 holds dcb to it. A raw dictionary is reached beyond the
    /// window, so the window covers the new bytes alone.
    /// </summary>
    private const int WindowLogMax = 24;

    private const int WindowLogMin = 10;

    /// <summary>RFC 9842 §4.1: 0xFF 'D' 'C' 'B'.</summary>
    private static ReadOnlySpan<byte> Magic => [0xFF, 0x44, 0x43, 0x42];

    /// <summary>True when dcb can be made and checked here.</summary>
    public static bool IsAvailable => LibBrotli.IsUsable;

    /// <summary>The window log for <paramref name="sourceLength"/> bytes: enough for the whole source, at most 24.</summary>
    public static int WindowLog(long sourceLength)
        => Math.Clamp(sourceLength <= 1 ? 0 : 64 - (int)long.LeadingZeroCount(sourceLength - 1), WindowLogMin, WindowLogMax);

    /// <summary><paramref name="source"/> in the dcb coding against <paramref name="dictionary"/>, whose SHA-256 is <paramref name="dictionaryHash"/>.</summary>
    public static byte[] Compress(ReadOnlySpan<byte> source, ReadOnlySpan<byte> dictionary, ReadOnlySpan<byte> dictionaryHash)
    {
        if (dictionaryHash.Length != 32)
        {
            throw new ArgumentException("A dcb header names the dictionary by its 32-byte SHA-256.", nameof(dictionaryHash));
        }

        var bound = checked((int)LibBrotli.BrotliEncoderMaxCompressedSize((nuint)source.Length) + HeaderLength + 1024);
        var buffer = ArrayPool<byte>.Shared.Rent(bound);
        nint prepared = 0;
        nint state = 0;
        try
        {
            Magic.CopyTo(buffer);
            dictionaryHash.CopyTo(buffer.AsSpan(Magic.Length));
            fixed (byte* prefix = dictionary)
            fixed (byte* input = source)
            fixed (byte* output = buffer)
            {
                // The prepared dictionary refers to the bytes, which stay fixed until it is destroyed below.
                prepared = LibBrotli.BrotliEncoderPrepareDictionary(LibBrotli.SharedDictionaryRaw, (nuint)dictionary.Length, prefix, Quality, 0, 0, 0);
                state = LibBrotli.BrotliEncoderCreateInstance(0, 0, 0);
                if (prepared == 0 || state == 0)
                {
                    throw new OutOfMemoryException("Brotli could not prepare the dictionary or the encoder.");
                }

                if (LibBrotli.BrotliEncoderSetParameter(state, LibBrotli.ParamQuality, Quality) == 0
                    || LibBrotli.BrotliEncoderSetParameter(state, LibBrotli.ParamWindowLog, (uint)WindowLog(source.Length)) == 0
                    || LibBrotli.BrotliEncoderSetParameter(state, LibBrotli.ParamSizeHint, (uint)Math.Min(source.Length, 1 << 30)) == 0
                    || LibBrotli.BrotliEncoderAttachPreparedDictionary(state, prepared) == 0)
                {
                    throw new InvalidOperationException("Brotli refused a parameter or the dictionary.");
                }

                var availableIn = (nuint)source.Length;
                var nextIn = input;
                var availableOut = (nuint)(bound - HeaderLength);
                var nextOut = output + HeaderLength;
                if (LibBrotli.BrotliEncoderCompressStream(state, LibBrotli.OperationFinish, &availableIn, &nextIn, &availableOut, &nextOut, null) == 0
                    || LibBrotli.BrotliEncoderIsFinished(state) == 0)
                {
                    throw new InvalidOperationException("Brotli could not encode against the dictionary.");
                }

                return buffer.AsSpan(0, (int)(nextOut - output)).ToArray();
            }
        }
        finally
        {
            if (state != 0)
            {
                LibBrotli.BrotliEncoderDestroyInstance(state);
            }

            if (prepared != 0)
            {
                LibBrotli.BrotliEncoderDestroyPreparedDictionary(prepared);
            }

            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>True when <paramref name="dcb"/> names <paramref name="dictionaryHash"/> and decodes against <paramref name="dictionary"/> to exactly <paramref name="expected"/>.</summary>
    public static bool DecodesTo(ReadOnlySpan<byte> dcb, ReadOnlySpan<byte> dictionary, ReadOnlySpan<byte> dictionaryHash, ReadOnlySpan<byte> expected)
    {
        if (dcb.Length < HeaderLength || !dcb[..Magic.Length].SequenceEqual(Magic) || !dcb[Magic.Length..HeaderLength].SequenceEqual(dictionaryHash))
        {
            return false;
        }

        var state = LibBrotli.BrotliDecoderCreateInstance(0, 0, 0);
        if (state == 0)
        {
            throw new OutOfMemoryException("BrotliDecoderCreateInstance failed.");
        }

        // One byte more than expected, so that a stream that decodes to more is caught.
        var output = ArrayPool<byte>.Shared.Rent(expected.Length + 1);
        try
        {
            fixed (byte* prefix = dictionary)
            fixed (byte* input = dcb)
            fixed (byte* destination = output)
            {
                if (LibBrotli.BrotliDecoderAttachDictionary(state, LibBrotli.SharedDictionaryRaw, (nuint)dictionary.Length, prefix) == 0)
                {
                    return false;
                }

                var availableIn = (nuint)(dcb.Length - HeaderLength);
                var nextIn = input + HeaderLength;
                var availableOut = (nuint)(expected.Length + 1);
                var nextOut = destination;
                var result = LibBrotli.BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, null);
                var written = (int)(nextOut - destination);
                return result == LibBrotli.DecoderSuccess && availableIn == 0 && output.AsSpan(0, written).SequenceEqual(expected);
            }
        }
        finally
        {
            LibBrotli.BrotliDecoderDestroyInstance(state);
            ArrayPool<byte>.Shared.Return(output);
        }
    }
}
