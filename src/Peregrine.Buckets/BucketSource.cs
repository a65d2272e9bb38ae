using System.Text.Json;
using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// Keeps an instance's copy of its bucket current: the first sync, then one at each poll and at
/// each bucket notification, one at a time, with backoff while the bucket cannot be read. The
/// site in force is never touched by a sync that fails: it is served until one succeeds. It
/// knows nothing of the catalog: it reports each release through the callbacks it is given
/// (the core's <c>Live/ContentSource</c> turns them into the catalog's start and refresh).
/// </summary>
internal sealed class BucketSource : ICopiedSource
{
    private const string FolderPrefix = "peregrine-bucket-";

    // A version folder the catalog has left is removed this long after, so a request that took
    // the previous snapshot just before the switch still finds its file to open.
    private static readonly TimeSpan s_removalGrace = TimeSpan.FromSeconds(10);

    // Between failed syncs: 1 s, doubling to this, each with jitter (so replicas that failed
    // together do not come back together, as throttling asks).
    private static readonly TimeSpan s_maxBackoff = TimeSpan.FromSeconds(30);

    private readonly string _parent;
    private readonly string _folderName;
    private readonly BucketSync _sync;
    private readonly BucketOptions _options;
    private readonly ILogger _logger;
    private readonly CancellationTokenSource _stopping = new();
    private readonly SemaphoreSlim _wake = new(0, 1);
    private readonly Dictionary<string, DateTime> _leaving = new(StringComparer.Ordinal);
    private Action? _firstRelease;
    private Action? _newRelease;
    private Func<string?>? _rootInForce;
    private Task? _loop;
    private InstanceFolder? _folder;
    private int _failures;
    private volatile BucketState _state;

    private BucketSource(string parent, string folderName, BucketSync sync, BucketOptions options, ILogger logger)
    {
        _parent = parent;
        _folderName = folderName;
        _sync = sync;
        _options = options;
        _logger = logger;
        _state = new BucketState(sync.Location, null, null, null, null);
    }

    /// <summary>The link the catalog is to serve; becomes the instance's root.</summary>
    public string RootLink => _sync.RootLink;

    /// <summary>The Last-Modified of each file, as listed; the index takes it instead of the file's time.</summary>
    public ListedTimes Times => _sync.Times;

    public Func<string, string, long?> ListedLastModified => _sync.Times.Find;

    public Func<string, IReadOnlyList<KeyValuePair<string, string>>?> EarlierVersions => _sync.Earlier.For;

    /// <summary>What the last syncs came to, for /healthz.</summary>
    public BucketState State => _state;

    /// <summary>True once a whole release is in the copy: until then, requests are answered 503.</summary>
    public bool HasSynced => _state.LastSync is not null;

    /// <summary>For tests: called before each download.</summary>
    internal BucketSync Sync => _sync;

    /// <summary>
    /// Names the process's folder for the copy and makes a client for the bucket; nothing is read
    /// from the bucket, and the folder is made by the first sync: a folder that cannot be made
    /// (the temporary folder full, unwritable, or refusing the lock) is reported and tried again
    /// with the sync's backoff, as a bucket that cannot be reached is, rather than stopping the
    /// process.
    /// </summary>
    public static BucketSource Create(BucketOptions options, ILoggerFactory loggerFactory)
    {
        var logger = loggerFactory.CreateLogger("Peregrine.Bucket");
        var client = BucketClient.Create(options);
        var parent = options.CacheDirectory ?? Path.GetTempPath();
        var name = InstanceFolder.NewName(FolderPrefix);
        return new BucketSource(parent, name, new BucketSync(client, options, Path.Combine(parent, name), logger), options, logger);
    }

    /// <summary>
    /// Starts syncing. Safe to call more than once; only the first call's callbacks are kept.
    /// They run on the sync loop, under no lock, and must only post and return.
    /// </summary>
    /// <param name="firstRelease">Called once, when the first release is copied whole and <see cref="RootLink"/> names it.</param>
    /// <param name="newRelease">Called after each later sync that moved <see cref="RootLink"/> to another release.</param>
    /// <param name="rootInForce">The folder the site is served from now (a version folder, links resolved), which is not removed; null when none is yet.</param>
    public void Start(Action firstRelease, Action newRelease, Func<string?> rootInForce)
    {
        lock (_stopping)
        {
            if (_loop is null)
            {
                _firstRelease = firstRelease;
                _newRelease = newRelease;
                _rootInForce = rootInForce;
                _loop = Task.Run(RunAsync);
            }
        }
    }

    /// <summary>Asks for a sync now (a bucket notification); folded into one already asked for.</summary>
    public void Notify()
    {
        try
        {
            if (_wake.CurrentCount == 0)
            {
                _wake.Release();
            }
        }
        catch (Exception ex) when (ex is SemaphoreFullException or ObjectDisposedException)
        {
            // Asked for already, or stopping.
        }
    }

    public void WriteHealth(Utf8JsonWriter json) => BucketHealth.Write(json, _state);

    public void Dispose()
    {
        _stopping.Cancel();
        try
        {
            _loop?.Wait(TimeSpan.FromSeconds(10));
        }
        catch (AggregateException)
        {
            // The loop ends by its cancellation.
        }

        _sync.Dispose();
        _folder?.Dispose();
        _wake.Dispose();
        _stopping.Dispose();
    }

    private async Task RunAsync()
    {
        var token = _stopping.Token;
        while (!token.IsCancellationRequested)
        {
            TimeSpan wait;
            var interruptible = true;
            try
            {
                _folder ??= InstanceFolder.Create(_parent, FolderPrefix, _folderName);
                var changed = await _sync.SyncAsync(token).ConfigureAwait(false);
                if (_failures > 0)
                {
                    BucketLog.Recovered(_logger, _sync.Location.ToString(), _sync.Endpoint);
                }

                _failures = 0;
                var first = !HasSynced;
                _state = _state with { Release = _sync.Release, LastSync = DateTimeOffset.UtcNow, Error = null, FailingSince = null };
                if (first)
                {
                    _firstRelease!();
                }
                else if (changed)
                {
                    // The root check would see the link move within WatchOptions.RootCheckInterval;
                    // this saves that wait.
                    _newRelease!();
                }

                wait = _options.PollInterval > TimeSpan.Zero ? _options.PollInterval : Timeout.InfiniteTimeSpan;
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception ex)
            {
                // Whatever went wrong (unreachable, refused, throttled after the SDK's own
                // retries, an object gone twice running), the copy in force is untouched.
                _failures++;
                wait = Backoff(_failures);
                interruptible = false;
                var reason = Reason(ex);
                _state = _state with { Error = reason, FailingSince = _state.FailingSince ?? DateTimeOffset.UtcNow };
                if (HasSynced)
                {
                    BucketLog.SyncFailed(_logger, _sync.Location.ToString(), _sync.Endpoint, reason, _sync.Release ?? "", Math.Round(wait.TotalSeconds, 1));
                }
                else
                {
                    BucketLog.FirstSyncFailed(_logger, _sync.Location.ToString(), _sync.Endpoint, reason, Math.Round(wait.TotalSeconds, 1));
                }
            }

            if (_folder is not null)
            {
                RemoveLeftVersions();
            }

            if (_leaving.Count > 0 && (wait == Timeout.InfiniteTimeSpan || wait > s_removalGrace))
            {
                // Come back to remove what the catalog has left once its grace is over.
                wait = s_removalGrace;
            }

            if (!await WaitAsync(wait, interruptible, token).ConfigureAwait(false))
            {
                return;
            }
        }
    }

    /// <summary>Waits out <paramref name="wait"/>, or until a notification when <paramref name="interruptible"/>; false when stopping.</summary>
    private async Task<bool> WaitAsync(TimeSpan wait, bool interruptible, CancellationToken token)
    {
        try
        {
            if (interruptible)
            {
                await _wake.WaitAsync(wait, token).ConfigureAwait(false);
            }
            else
            {
                // Backing off: a notification waits for the backoff to end, and is taken then.
                await Task.Delay(wait, token).ConfigureAwait(false);
            }

            return true;
        }
        catch (OperationCanceledException)
        {
            return false;
        }
    }

    /// <summary>Removes the version folders no longer served, once they have been left for the grace time.</summary>
    private void RemoveLeftVersions()
    {
        var now = DateTime.UtcNow;
        var stale = _sync.StaleFolders(keep: _rootInForce?.Invoke());
        foreach (var gone in _leaving.Keys.Except(stale).ToList())
        {
            _leaving.Remove(gone);
        }

        foreach (var folder in stale)
        {
            if (!_leaving.TryGetValue(folder, out var since))
            {
                _leaving[folder] = now;
            }
            else if (now - since >= s_removalGrace)
            {
                _sync.Remove(folder);
                _leaving.Remove(folder);
            }
        }
    }

    private static TimeSpan Backoff(int failures)
    {
        var ceiling = Math.Min(s_maxBackoff.TotalSeconds, Math.Pow(2, Math.Min(failures - 1, 10)));

        // "Equal jitter": between half the ceiling and all of it.
        return TimeSpan.FromSeconds(ceiling / 2 + Random.Shared.NextDouble() * ceiling / 2);
    }

    /// <summary>One line for the log and /healthz: the innermost message, which names what failed.</summary>
    private static string Reason(Exception ex)
    {
        var inner = ex;
        while (inner.InnerException is { } next && inner is not Amazon.S3.AmazonS3Exception)
        {
            inner = next;
        }

        var message = inner is Amazon.S3.AmazonS3Exception s3 && !string.IsNullOrEmpty(s3.ErrorCode)
            ? string.IsNullOrEmpty(s3.Message) ? $"{(int)s3.StatusCode} {s3.ErrorCode}" : $"{(int)s3.StatusCode} {s3.ErrorCode}: {s3.Message}"
            : inner.Message;
        return message.ReplaceLineEndings(" ");
    }
}

/// <summary>What the bucket source last came to.</summary>
/// <param name="Location">The bucket and prefix.</param>
/// <param name="Release">The release in force; null before the first sync.</param>
/// <param name="LastSync">When the bucket was last read whole and found in the copy (changed or not).</param>
/// <param name="Error">Why the last sync failed; null when it succeeded.</param>
/// <param name="FailingSince">When the syncs started failing; null when the last one succeeded.</param>
internal sealed record BucketState(BucketLocation Location, string? Release, DateTimeOffset? LastSync, string? Error, DateTimeOffset? FailingSince);
