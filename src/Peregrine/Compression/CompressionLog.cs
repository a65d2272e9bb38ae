using Microsoft.Extensions.Logging;

namespace Peregrine.Compression;

/// <summary>
/// Log messages of index-time compression, event ids 20 to 39. Nothing here is logged per
/// request; warnings about a sidecar are logged once per sidecar.
/// </summary>
internal static partial class CompressionLog
{
    [LoggerMessage(20, LogLevel.Information, "Compressing {Files} files in the background.")]
    public static partial void Started(ILogger logger, int files);

    [LoggerMessage(21, LogLevel.Information, "Compressed {Done} of {Queued} files so far ({Milliseconds} ms).")]
    public static partial void Progress(ILogger logger, long done, long queued, long milliseconds);

    [LoggerMessage(22, LogLevel.Information, "Compressed {Compressed} of {Files} files: {BytesIn} bytes in, {BytesOut} bytes out (the smallest variant of each, first pass), {Upgraded} made again at final quality, in {Milliseconds} ms.")]
    public static partial void Finished(ILogger logger, long compressed, long files, long bytesIn, long bytesOut, long upgraded, long milliseconds);

    [LoggerMessage(23, LogLevel.Information, "zstd is disabled: the system's libzstd cannot be used ({Reason}).")]
    public static partial void ZstdUnavailable(ILogger logger, string reason);

    [LoggerMessage(24, LogLevel.Warning, "Ignoring the sidecar {Path}: it is older than the file it encodes.")]
    public static partial void SidecarStale(ILogger logger, string path);

    [LoggerMessage(25, LogLevel.Warning, "Ignoring the sidecar {Path}: it {Reason}.")]
    public static partial void SidecarInvalid(ILogger logger, string path, string reason);

    [LoggerMessage(26, LogLevel.Debug, "Not compressing {Path}: it cannot be read ({Reason}).")]
    public static partial void SourceUnreadable(ILogger logger, string path, string reason);

    [LoggerMessage(27, LogLevel.Debug, "Not compressing {Path}: it changed since it was indexed.")]
    public static partial void SourceChanged(ILogger logger, string path);

    [LoggerMessage(28, LogLevel.Debug, "Not compressing {Path}: its {Length} bytes exceed Compression.MaxFileSize.")]
    public static partial void SourceTooLarge(ILogger logger, string path, long length);

    [LoggerMessage(29, LogLevel.Warning, "Compressing {Path} again: the cached copy {Reason}.")]
    public static partial void CacheFileInvalid(ILogger logger, string path, string reason);

    [LoggerMessage(30, LogLevel.Warning, "Cannot use the compression cache folder {Path} ({Reason}); compressed bytes are kept in memory only.")]
    public static partial void CacheUnavailable(ILogger logger, string path, string reason);

    [LoggerMessage(31, LogLevel.Warning, "Cannot write the compression cache file {Path} ({Reason}).")]
    public static partial void CacheWriteFailed(ILogger logger, string path, string reason);

    [LoggerMessage(32, LogLevel.Debug, "Dropped the {Coding} variant of {Path}: the memory budget is spent and there is no file to serve it from.")]
    public static partial void VariantDropped(ILogger logger, string coding, string path);

    [LoggerMessage(34, LogLevel.Information, "Every file has its first variants: {Compressed} of {Files} files compressed in {Milliseconds} ms; the final pass runs at low priority.")]
    public static partial void FirstPassFinished(ILogger logger, long compressed, long files, long milliseconds);

    [LoggerMessage(33, LogLevel.Error, "Compressing {Path} failed; it is served unencoded.")]
    public static partial void Failed(ILogger logger, string path, Exception exception);

    [LoggerMessage(35, LogLevel.Debug, "Serving Peregrine's own variants of {Path}: the manifest's {Coding} file {EncodedPath} {Reason}.")]
    public static partial void StatedFileUnusable(ILogger logger, string path, string coding, string encodedPath, string reason);

    [LoggerMessage(36, LogLevel.Error, "Making the dictionary deltas of {Path} failed; it is served with its ordinary codings.")]
    public static partial void DeltaFailed(ILogger logger, string path, Exception exception);

    [LoggerMessage(37, LogLevel.Warning, "Dropped a dictionary delta (dcz or dcb) of {Path}: it does not decode to the file's bytes against its dictionary.")]
    public static partial void DeltaInvalid(ILogger logger, string path);

    [LoggerMessage(38, LogLevel.Warning, "Left out a kept dictionary version read from {Path}: {Reason}.")]
    public static partial void KeptVersionIgnored(ILogger logger, string path, string reason);

    [LoggerMessage(39, LogLevel.Warning, "The kept dictionary versions are not saved in {Path} ({Reason}): they are kept in memory only, and lost on restart.")]
    public static partial void KeptVersionsNotSaved(ILogger logger, string path, string reason);
}
