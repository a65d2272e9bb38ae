using System.Runtime.InteropServices;

namespace Peregrine.Interop;

/// <summary>
/// The calls into the system's libzstd (zstd.h), for <c>Compression/Zstd</c>, which loads it on
/// first use and says why where it cannot.
/// </summary>
internal static unsafe partial class LibZstd
{
    private const string Library = "libzstd.so.1";

    private const int MinimumVersion = 1_04_00;

    private static readonly Lazy<string?> s_unusableReason = new(Probe);
    private static uint s_version;

    /// <summary>
    /// True when libzstd loads and is 1.4 or later (whose parameter API the decoder uses), and
    /// the portable parts are not forced (<see cref="PlatformParts"/>). Read by compression, which
    /// makes zstd and dcz only then, and by the index, which offers a file as a compression
    /// dictionary only when a delta against it can be made.
    /// </summary>
    public static bool IsUsable => s_unusableReason.Value is null;

    /// <summary>Why libzstd cannot be used, or <see langword="null"/> when it can.</summary>
    public static string? UnusableReason => s_unusableReason.Value;

    /// <summary>ZSTD_versionNumber(); 0 where the library cannot load.</summary>
    public static uint Version
    {
        get
        {
            _ = s_unusableReason.Value;
            return s_version;
        }
    }

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

    private static string? Probe()
    {
        // Not PlatformParts.IsNative: wherever libzstd.so.1 loads (a BSD), it is used unless forced off.
        if (PlatformParts.PortableForced)
        {
            return "the portable parts are forced (" + PlatformParts.PortableVariable + ")";
        }

        try
        {
            var version = s_version = ZSTD_versionNumber();
            return version >= MinimumVersion ? null : $"version {version / 10000}.{version / 100 % 100}.{version % 100} is older than 1.4.0";
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            return ex.Message;
        }
    }
}
