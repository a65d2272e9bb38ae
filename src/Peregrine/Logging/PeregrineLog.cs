using Microsoft.Extensions.Logging;

namespace Peregrine.Logging;

/// <summary>Log messages with stable event ids. Nothing here is logged per request.</summary>
internal static partial class PeregrineLog
{
    [LoggerMessage(1, LogLevel.Information, "Indexed {Files} files ({Bytes} bytes, {CachedBytes} in memory) under {Root} in {Milliseconds} ms.")]
    public static partial void Indexed(ILogger logger, int files, long bytes, long cachedBytes, string root, long milliseconds);

    [LoggerMessage(2, LogLevel.Warning, "Not serving {Path}: its link resolves outside the root.")]
    public static partial void LinkOutsideRoot(ILogger logger, string path);

    [LoggerMessage(3, LogLevel.Warning, "Not serving {Path}: it is not a regular file (a FIFO, socket or device).")]
    public static partial void NotRegularFile(ILogger logger, string path);

    [LoggerMessage(4, LogLevel.Warning, "Not serving {Path}: it cannot be read ({Reason}).")]
    public static partial void Unreadable(ILogger logger, string path, string reason);

    [LoggerMessage(5, LogLevel.Warning, "Not serving {Path}: its name is not valid UTF-8, so no URL can name it.")]
    public static partial void UndecodableName(ILogger logger, string path);

    [LoggerMessage(6, LogLevel.Error, "Indexing {Root} failed.")]
    public static partial void IndexFailed(ILogger logger, string root, Exception exception);

    [LoggerMessage(7, LogLevel.Warning, "Aborted the response for {Path}: the file changed or vanished while it was being sent.")]
    public static partial void FileChangedWhileSending(ILogger logger, string path);

    [LoggerMessage(8, LogLevel.Debug, "Skipped a dangling link at {Path}.")]
    public static partial void DanglingLink(ILogger logger, string path);

    [LoggerMessage(9, LogLevel.Warning, "Could not re-index {Root} ({Reason}); still serving the previous index.")]
    public static partial void RebuildFailed(ILogger logger, string root, string reason);

    [LoggerMessage(10, LogLevel.Information, "The root {Root} now resolves to {Target}; switched to it whole, once indexed.")]
    public static partial void RootReplaced(ILogger logger, string root, string target);

    [LoggerMessage(11, LogLevel.Warning, "Cannot watch {Root} for changes ({Reason}); rescanning every 2 s instead.")]
    public static partial void WatcherUnavailable(ILogger logger, string root, string reason);

    [LoggerMessage(12, LogLevel.Warning, "Reading {Path} has not returned for {Seconds} s; its response waits on the disk. Not logged again for this file until it reads again.")]
    public static partial void ReadHanging(ILogger logger, string path, int seconds);

    /// <summary>Once per application, at its first catalog: which of the native or portable parts (Interop/PlatformParts) it runs on.</summary>
    [LoggerMessage(13, LogLevel.Information, "Platform{Mode}: {Watching}, {Copies}, {Leases}, {Zstd}.")]
    public static partial void Platform(ILogger logger, string mode, string watching, string copies, string leases, string zstd);

    [LoggerMessage(20, LogLevel.Warning, "Aborted the response for {Path}: reading the file failed ({Reason}). Not logged again for this file until it reads again.")]
    public static partial void ReadFailedWhileSending(ILogger logger, string path, string reason);

    [LoggerMessage(16, LogLevel.Debug, "Updated {Paths} changed paths under {Root} in {Milliseconds} ms ({Deferred} still being written).")]
    public static partial void Updated(ILogger logger, int paths, string root, double milliseconds, int deferred);

    [LoggerMessage(50, LogLevel.Warning, "Copies of the files served from disk cannot be kept under {Folder} ({Reason}): such files are read from the originals, and one rewritten in place is answered with 503 until it is indexed again.")]
    public static partial void CopiesUnavailable(ILogger logger, string folder, string reason);

    [LoggerMessage(51, LogLevel.Information, "The copies of the files served from disk reached Watch.CopyBudget ({Budget} bytes): larger files left over are read from the originals.")]
    public static partial void CopyBudgetReached(ILogger logger, long budget);

    [LoggerMessage(52, LogLevel.Information, "The file system of {Folder} takes no locks: this server's copies are kept there unlocked, and no server removes another's folder there, so a killed server's copies stay until removed by hand.")]
    public static partial void CopiesUnlocked(ILogger logger, string folder);
}
