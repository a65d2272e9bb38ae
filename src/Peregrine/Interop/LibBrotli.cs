using System.Runtime.InteropServices;

namespace Peregrine.Interop;

/// <summary>
/// Brotli 1.1's shared-dictionary calls (encode.h, decode.h, shared_dictionary.h), for the dcb
/// content coding of RFC 9842 (<c>Compression/BrotliDictionary</c>). Neither Debian's libbrotli
/// (1.0.9) nor .NET 10's System.IO.Compression has them; the Native AOT runtime pack links
/// brotli 1.1 statically into the executable, and the standalone server's project binds these
/// imports to it (<c>DirectPInvoke</c>). Elsewhere (the library under JIT) the names resolve to
/// the system's older library or to none, <see cref="IsUsable"/> is false, and only dcz is made.
/// </summary>
internal static unsafe partial class LibBrotli
{
    private const string Encoder = "libbrotlienc";
    private const string Decoder = "libbrotlidec";

    /// <summary>BROTLI_SHARED_DICTIONARY_RAW: the dictionary is plain bytes, addressed as a prefix.</summary>
    public const int SharedDictionaryRaw = 0;

    /// <summary>BROTLI_PARAM_QUALITY.</summary>
    public const int ParamQuality = 1;

    /// <summary>BROTLI_PARAM_LGWIN.</summary>
    public const int ParamWindowLog = 2;

    /// <summary>BROTLI_PARAM_SIZE_HINT.</summary>
    public const int ParamSizeHint = 5;

    /// <summary>BROTLI_OPERATION_FINISH.</summary>
    public const int OperationFinish = 2;

    /// <summary>BROTLI_DECODER_RESULT_SUCCESS.</summary>
    public const int DecoderSuccess = 1;

    private const uint MinimumVersion = 0x1001000;

    private static readonly Lazy<bool> s_usable = new(Probe);

    /// <summary>True when brotli 1.1 or later is reachable, with its dictionary calls, and the portable parts are not forced.</summary>
    public static bool IsUsable => s_usable.Value;

    [LibraryImport(Encoder)]
    public static partial uint BrotliEncoderVersion();

    [LibraryImport(Encoder)]
    public static partial nint BrotliEncoderPrepareDictionary(int type, nuint size, byte* data, int quality, nint alloc, nint free, nint opaque);

    [LibraryImport(Encoder)]
    public static partial void BrotliEncoderDestroyPreparedDictionary(nint dictionary);

    [LibraryImport(Encoder)]
    public static partial nint BrotliEncoderCreateInstance(nint alloc, nint free, nint opaque);

    [LibraryImport(Encoder)]
    public static partial void BrotliEncoderDestroyInstance(nint state);

    [LibraryImport(Encoder)]
    public static partial int BrotliEncoderSetParameter(nint state, int parameter, uint value);

    [LibraryImport(Encoder)]
    public static partial int BrotliEncoderAttachPreparedDictionary(nint state, nint dictionary);

    [LibraryImport(Encoder)]
    public static partial nuint BrotliEncoderMaxCompressedSize(nuint inputSize);

    [LibraryImport(Encoder)]
    public static partial int BrotliEncoderCompressStream(nint state, int operation, nuint* availableIn, byte** nextIn, nuint* availableOut, byte** nextOut, nuint* totalOut);

    [LibraryImport(Encoder)]
    public static partial int BrotliEncoderIsFinished(nint state);

    [LibraryImport(Decoder)]
    public static partial uint BrotliDecoderVersion();

    [LibraryImport(Decoder)]
    public static partial nint BrotliDecoderCreateInstance(nint alloc, nint free, nint opaque);

    [LibraryImport(Decoder)]
    public static partial void BrotliDecoderDestroyInstance(nint state);

    [LibraryImport(Decoder)]
    public static partial int BrotliDecoderAttachDictionary(nint state, int type, nuint size, byte* data);

    [LibraryImport(Decoder)]
    public static partial int BrotliDecoderDecompressStream(nint state, nuint* availableIn, byte** nextIn, nuint* availableOut, byte** nextOut, nuint* totalOut);

    private static bool Probe()
    {
        if (PlatformParts.PortableForced)
        {
            return false;
        }

        try
        {
            return BrotliEncoderVersion() >= MinimumVersion && BrotliDecoderVersion() >= MinimumVersion;
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException or BadImageFormatException)
        {
            return false;
        }
    }
}
