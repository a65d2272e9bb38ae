using System.Buffers;
using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Compression;

/// <summary>
/// Zstandard (RFC 8878) through the system's libzstd, loaded on first use. No managed zstd
/// ships with .NET, so where <c>libzstd.so.1</c> is missing (or older than 1.4, whose
/// parameter API the decoder uses), and on the portable path (<see cref="PlatformParts"/>), the zstd
/// coding is simply not produced.
/// </summary>
internal static unsafe partial class Zstd
{
    /// <summary>
    /// Level 19, the highest before the "ultra" levels. Its largest window is 2^23 = 8 MiB, the
    /// most RFC 9659 §3 lets an encoder use for the zstd content coding (browsers refuse larger
    /// windows); levels 20 to 22 would exceed it on large files.
    /// </summary>
    public const int Level = 19;

    /// <summary>The window limit of RFC 9659 §3 (8 MiB), enforced on sidecars too.</summary>
    private const int WindowLogMax = 23;

    /// <summary>True when libzstd can be used.</summary>
    public static bool IsAvailable => LibZstd.IsUsable;

    /// <summary>Why libzstd cannot be used, or <see langword="null"/> when it can.</summary>
    public static string? UnavailableReason => LibZstd.UnusableReason;

    /// <summary>What the start-up line says: the library's version, or that there is no zstd.</summary>
    public static string Description
        => IsAvailable ? $"zstd (libzstd {LibZstd.Version / 10000}.{LibZstd.Version / 100 % 100}.{LibZstd.Version % 100})" : "no zstd";

    /// <summary>Compresses into a single frame that records the content size.</summary>
    public static byte[] Compress(ReadOnlySpan<byte> source, int level = Level)
    {
        var bound = LibZstd.ZSTD_compressBound((nuint)source.Length);
        var buffer = ArrayPool<byte>.Shared.Rent(checked((int)bound));
        try
        {
            nuint written;
            fixed (byte* input = source)
            fixed (byte* output = buffer)
            {
                written = LibZstd.ZSTD_compress(output, (nuint)buffer.Length, input, (nuint)source.Length, level);
            }

            ThrowIfError(written);
            return buffer.AsSpan(0, (int)written).ToArray();
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>A read-only stream of the bytes that <paramref name="encoded"/> decodes to.</summary>
    public static Stream OpenDecoder(Stream encoded, bool leaveOpen) => new DecoderStream(encoded, leaveOpen);

    private static void ThrowIfError(nuint code)
    {
        if (LibZstd.ZSTD_isError(code) != 0)
        {
            throw new InvalidDataException("zstd: " + Marshal.PtrToStringUTF8(LibZstd.ZSTD_getErrorName(code)));
        }
    }

    /// <summary>
    /// Streaming decode (ZSTD_decompressStream), so a sidecar is checked in bounded memory
    /// however large it claims to be. Concatenated frames are decoded in turn (RFC 8878 §3.1);
    /// input that ends inside a frame is an error, not a short read.
    /// </summary>
    private sealed class DecoderStream : ReadOnlyStream
    {
        private const int InputSize = 64 * 1024;

        private readonly Stream _encoded;
        private readonly bool _leaveOpen;
        private readonly byte[] _input = ArrayPool<byte>.Shared.Rent(InputSize);
        private nint _context;
        private int _inputLength;
        private int _inputPosition;
        private bool _inputEnded;
        private bool _frameComplete;
        private bool _finished;

        public DecoderStream(Stream encoded, bool leaveOpen)
        {
            _encoded = encoded;
            _leaveOpen = leaveOpen;
            _context = LibZstd.ZSTD_createDCtx();
            if (_context == 0)
            {
                throw new OutOfMemoryException("ZSTD_createDCtx failed.");
            }

            ThrowIfError(LibZstd.ZSTD_DCtx_setParameter(_context, LibZstd.DecompressionWindowLogMax, WindowLogMax));
        }

        public override int Read(Span<byte> buffer)
        {
            ObjectDisposedException.ThrowIf(_context == 0, this);
            if (_finished || buffer.IsEmpty)
            {
                return 0;
            }

            while (true)
            {
                if (_inputPosition == _inputLength && !_inputEnded)
                {
                    _inputLength = _encoded.Read(_input, 0, InputSize);
                    _inputPosition = 0;
                    _inputEnded = _inputLength == 0;
                }

                if (_inputEnded && _inputPosition == _inputLength && _frameComplete)
                {
                    _finished = true;
                    return 0;
                }

                nuint result;
                var output = new LibZstd.OutBuffer { Size = (nuint)buffer.Length };
                fixed (byte* destination = buffer)
                fixed (byte* source = _input)
                {
                    var input = new LibZstd.InBuffer { Source = source, Size = (nuint)_inputLength, Position = (nuint)_inputPosition };
                    output.Destination = destination;
                    result = LibZstd.ZSTD_decompressStream(_context, &output, &input);
                    _inputPosition = (int)input.Position;
                }

                ThrowIfError(result);

                // 0 means a frame is complete and flushed; anything else, that more is to come.
                _frameComplete = result == 0;
                if (output.Position > 0)
                {
                    return (int)output.Position;
                }

                if (_inputEnded && _inputPosition == _inputLength)
                {
                    if (!_frameComplete)
                    {
                        throw new InvalidDataException("zstd: the data ends inside a frame.");
                    }

                    _finished = true;
                    return 0;
                }
            }
        }

        protected override void Dispose(bool disposing)
        {
            if (_context != 0)
            {
                LibZstd.ZSTD_freeDCtx(_context);
                _context = 0;
                if (disposing)
                {
                    ArrayPool<byte>.Shared.Return(_input);
                    if (!_leaveOpen)
                    {
                        _encoded.Dispose();
                    }
                }
            }

            base.Dispose(disposing);
        }
    }
}
