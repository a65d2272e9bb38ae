using System.Runtime.InteropServices;

namespace Peregrine.Interop;

/// <summary>
/// The calls into the system's libzstd (zstd.h), for <c>Compression/Zstd</c>, which loads it on
/// first use and says why where it cannot.
/// </summary>
internal static unsafe partial class LibZstd
{
    private const string Library = "libzstd.so.1";

    /// <summary>ZSTD_d_windowLogMax in zstd.h.</summary>
    public const int DecompressionWindowLogMax = 100;

    /// <summary>ZSTD_inBuffer.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct InBuffer
    {
        public byte* Source;
        public nuint Size;
        public nuint Position;
    }

    /// <summary>ZSTD_outBuffer.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct OutBuffer
    {
        public byte* Destination;
        public nuint Size;
        public nuint Position;
    }

    [LibraryImport(Library)]
    public static partial uint ZSTD_versionNumber();

    [LibraryImport(Library)]
    public static partial nuint ZSTD_compressBound(nuint sourceSize);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_compress(byte* destination, nuint destinationCapacity, byte* source, nuint sourceSize, int level);

    [LibraryImport(Library)]
    public static partial uint ZSTD_isError(nuint code);

    [LibraryImport(Library)]
    public static partial nint ZSTD_getErrorName(nuint code);

    [LibraryImport(Library)]
    public static partial nint ZSTD_createDCtx();

    [LibraryImport(Library)]
    public static partial nuint ZSTD_freeDCtx(nint context);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_DCtx_setParameter(nint context, int parameter, int value);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_decompressStream(nint context, OutBuffer* output, InBuffer* input);
}
