using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>Log messages of the bucket source, event ids 300-319. Nothing here is logged per request.</summary>
internal static partial class BucketLog
{
    [LoggerMessage(300, LogLevel.Information, "Copied {Source} (release {Release}): {Files} files, {Downloaded} downloaded ({Bytes} bytes), {Reused} reused, in {Milliseconds} ms; serving it once indexed.")]
    public static partial void Synced(ILogger logger, string source, string release, int files, int downloaded, long bytes, int reused, long milliseconds);

    [LoggerMessage(301, LogLevel.Error, "Cannot read {Source} at {Endpoint}: {Reason}. Nothing is served until it can be read; trying again in {Seconds} s.")]
    public static partial void FirstSyncFailed(ILogger logger, string source, string endpoint, string reason, double seconds);

    [LoggerMessage(302, LogLevel.Warning, "Cannot read {Source} at {Endpoint}: {Reason}. Still serving release {Release}; trying again in {Seconds} s.")]
    public static partial void SyncFailed(ILogger logger, string source, string endpoint, string reason, string release, double seconds);

    [LoggerMessage(303, LogLevel.Information, "{Source} can be read again at {Endpoint}.")]
    public static partial void Recovered(ILogger logger, string source, string endpoint);

    [LoggerMessage(304, LogLevel.Warning, "Not copying the object {Key}: its key cannot be a file (an empty, '.' or '..' segment, a backslash or control character, or a file where another key needs a folder).")]
    public static partial void KeySkipped(ILogger logger, string key);

    [LoggerMessage(305, LogLevel.Information, "{Key} changed between the listing and its download; listing {Source} again.")]
    public static partial void Relisting(ILogger logger, string key, string source);

    [LoggerMessage(306, LogLevel.Debug, "Bucket notification for {Source}: {Records} records; syncing.")]
    public static partial void Notified(ILogger logger, string source, int records);

    [LoggerMessage(307, LogLevel.Warning, "Cannot take the earlier versions of release {Release}'s fingerprinted files from the bucket ({Reason}): until the next release, its compression dictionaries are the files in force only.")]
    public static partial void EarlierReleasesFailed(ILogger logger, string release, string reason);
}
