using System.Runtime.InteropServices;

namespace Peregrine.Interop;

// The calls that compress against a raw-content dictionary (zstd.h, "advanced" API, stable since
// libzstd 1.4.0), for the dcz coding of RFC 9842 (Compression/Zstd.Dictionaries.cs).
internal static unsafe partial class LibZstd
{
    /// <summary>ZSTD_c_compressionLevel in zstd.h.</summary>
    public const int CompressionLevel = 100;

    /// <summary>ZSTD_c_windowLog in zstd.h.</summary>
    public const int CompressionWindowLog = 101;

    /// <summary>ZSTD_c_contentSizeFlag in zstd.h.</summary>
    public const int CompressionContentSizeFlag = 200;

    [LibraryImport(Library)]
    public static partial nint ZSTD_createCCtx();

    [LibraryImport(Library)]
    public static partial nuint ZSTD_freeCCtx(nint context);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_CCtx_setParameter(nint context, int parameter, int value);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_CCtx_setPledgedSrcSize(nint context, ulong sourceSize);

    /// <summary>
    /// References <paramref name="prefix"/> as raw content (never parsed as a trained dictionary)
    /// for the next frame only; the bytes must stay in place until that frame is made.
    /// </summary>
    [LibraryImport(Library)]
    public static partial nuint ZSTD_CCtx_refPrefix(nint context, byte* prefix, nuint prefixSize);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_compress2(nint context, byte* destination, nuint destinationCapacity, byte* source, nuint sourceSize);

    /// <summary>The decoder's side of <see cref="ZSTD_CCtx_refPrefix"/>, for the next frame only.</summary>
    [LibraryImport(Library)]
    public static partial nuint ZSTD_DCtx_refPrefix(nint context, byte* prefix, nuint prefixSize);

    [LibraryImport(Library)]
    public static partial nuint ZSTD_decompressDCtx(nint context, byte* destination, nuint destinationCapacity, byte* source, nuint sourceSize);
}
