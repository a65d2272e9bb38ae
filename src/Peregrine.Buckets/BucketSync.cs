using System.Diagnostics;
using System.Runtime.InteropServices;
using Amazon.S3.Model;
using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// Copies one release of the bucket into a new local version folder and, only once every file of
/// it is there at the listed length, points the <c>current</c> link at it with one rename(2): the
/// catalog, whose root is that link, then indexes the new folder whole and publishes it as one
/// snapshot (docs/deployment.md, "Serving from a bucket").
/// </summary>
/// <remarks>
/// The folder is the process's own (<see cref="InstanceFolder"/>): <c>current</c> → <c>v7</c>, the
/// version folders, nothing else. A file whose ETag and length are unchanged from a version already
/// held is hard-linked from it rather than downloaded again, whatever its new Last-Modified: the
/// index takes Last-Modified from the listing (<see cref="ListedTimes"/>), not from the file, so
/// replicas send the same Last-Modified, and a content-hash ETag equal to a local copy's. Not
/// thread-safe: <see cref="BucketSource"/> runs one sync at a time.
/// </remarks>
internal sealed partial class BucketSync : IDisposable
{
    public const string LinkName = "current";
    private const string ReleasesFolder = "releases/";

    private readonly BucketClient _client;
    private readonly BucketOptions _options;
    private readonly string _folder;
    private readonly ILogger _logger;
    private readonly HashSet<string> _skippedKeys = new(StringComparer.Ordinal);
    private readonly ListedTimes _times = new();
    private readonly EarlierReleases _earlier;
    private LocalVersion? _current;
    private string? _pointerETag;
    private int _lastVersion;

    public BucketSync(BucketClient client, BucketOptions options, string folder, ILogger logger)
    {
        _client = client;
        _options = options;
        _folder = folder;
        _logger = logger;
        _earlier = new EarlierReleases(client, options, folder, logger);
    }

    public BucketLocation Location => _client.Location;

    /// <summary>Where requests go, for messages.</summary>
    public string Endpoint => _client.Endpoint;

    /// <summary>The link the catalog serves: its target is the version in force.</summary>
    public string RootLink => Path.Combine(_folder, LinkName);

    /// <summary>The Last-Modified of each file of the versions held, for the index.</summary>
    public ListedTimes Times => _times;

    /// <summary>The earlier versions of each version's fingerprinted files, for the compression dictionaries.</summary>
    public EarlierReleases Earlier => _earlier;

    /// <summary>The release in force (the pointer's id, or the prefix itself); null before the first sync.</summary>
    public string? Release => _current?.Release;

    /// <summary>The version folder the link points at; null before the first sync.</summary>
    public string? CurrentFolder => _current?.Folder;

    /// <summary>Called before each download; tests use it to change the bucket between the listing and a get.</summary>
    internal Func<BucketObject, CancellationToken, Task>? BeforeDownload { get; set; }

    /// <summary>
    /// Brings the copy up to the bucket. True when a new version was put in force; false when the
    /// bucket holds what is served already.
    /// </summary>
    /// <exception cref="BucketChangedException">Objects kept changing under the listing, twice running, or the pointer is missing.</exception>
    /// <exception cref="Amazon.Runtime.AmazonServiceException">The bucket refused or failed a request, after the SDK's retries.</exception>
    public async Task<bool> SyncAsync(CancellationToken cancellationToken)
    {
        var prefix = _client.Location.Prefix;
        string release;
        string releasePrefix;
        string? pointerETag = null;
        if (_options.Pointer is { } pointer)
        {
            // A 304 says the pointer names what is in force: a release is never changed once named.
            if (await _client.ReadPointerAsync(prefix + pointer, _current is null ? null : _pointerETag, cancellationToken).ConfigureAwait(false) is not { } read)
            {
                return false;
            }

            if (!BucketPaths.IsSegment(read.Text) || read.Text.Contains('/', StringComparison.Ordinal))
            {
                throw new InvalidDataException($"the pointer object {prefix}{pointer} should hold a release id (one plain name), not '{Shorten(read.Text)}'.");
            }

            (release, pointerETag) = (read.Text, read.ETag);
            releasePrefix = prefix + ReleasesFolder + release + "/";
            if (_current?.Release == release)
            {
                _pointerETag = pointerETag;
                return false;
            }
        }
        else
        {
            release = BucketLocation.Scheme + _client.Location.Bucket + "/" + prefix;
            releasePrefix = prefix;
        }

        var stopwatch = Stopwatch.StartNew();
        var donors = new List<LocalVersion>(2);
        if (_current is not null)
        {
            donors.Add(_current);
        }

        for (var attempt = 1; ; attempt++)
        {
            var listed = Select(await _client.ListAsync(releasePrefix, cancellationToken).ConfigureAwait(false), releasePrefix);
            if (_options.Pointer is not null && listed.Count == 0)
            {
                throw new BucketChangedException($"the release {release} named by the pointer has no objects under {releasePrefix}.");
            }

            if (_current is not null && _current.Release == release && SameObjects(_current.Objects, listed))
            {
                return false;
            }

            var version = new LocalVersion(Path.Combine(_folder, "v" + (++_lastVersion).ToString(System.Globalization.CultureInfo.InvariantCulture)), release, new Dictionary<string, BucketObject>(StringComparer.Ordinal));
            try
            {
                var (downloaded, bytes) = await FillAsync(version, listed, donors, cancellationToken).ConfigureAwait(false);

                // Before the link names it, as the listed times: the index may read it at once.
                await _earlier.PrepareAsync(version.Folder, release, _options.Pointer is null ? null : prefix + ReleasesFolder, version.Objects, cancellationToken).ConfigureAwait(false);
                Publish(version);
                _pointerETag = pointerETag;
                BucketLog.Synced(_logger, _client.Location.ToString(), release, listed.Count, downloaded, bytes, listed.Count - downloaded, stopwatch.ElapsedMilliseconds);
                return true;
            }
            catch (BucketChangedException ex) when (attempt == 1)
            {
                // Deleted or replaced between the listing and the get (a deploy under way, in
                // the prefix mode): list once more; the files already fetched are reused.
                BucketLog.Relisting(_logger, ex.Message, _client.Location.ToString());
                donors.Add(version);
            }
            catch
            {
                RemoveUnused(donors);

                // Its times too, if it failed in the switch itself.
                Remove(version.Folder);
                throw;
            }
        }
    }

    /// <summary>
    /// The version folders that are neither in force nor <paramref name="keep"/> (the one the
    /// catalog still serves until it has indexed the new one).
    /// </summary>
    public List<string> StaleFolders(string? keep)
    {
        var stale = new List<string>();
        foreach (var folder in Directory.EnumerateDirectories(_folder, "v*"))
        {
            // By name: the catalog's root is a real path, which may differ from this one in
            // its parents (a temporary folder reached through a link).
            var name = Path.GetFileName(folder);
            if (name != Path.GetFileName(_current?.Folder) && name != Path.GetFileName(keep))
            {
                stale.Add(folder);
            }
        }

        return stale;
    }

    /// <summary>Removes one version folder no longer served.</summary>
    public void Remove(string folder)
    {
        _times.Forget(folder);
        _earlier.Forget(folder);
        TryDelete(folder);
    }

    public void Dispose() => _client.Dispose();

    /// <summary>The objects that can become files, by relative path; keys that cannot are logged once and left out.</summary>
    private Dictionary<string, BucketObject> Select(List<S3Object> objects, string releasePrefix)
    {
        var selected = new Dictionary<string, BucketObject>(objects.Count, StringComparer.Ordinal);
        var folders = new HashSet<string>(StringComparer.Ordinal);
        foreach (var item in objects)
        {
            if (item.Key.Length > releasePrefix.Length && item.Key[^1] == '/' && item.Size is null or 0)
            {
                // A "folder" placeholder that S3 consoles make: nothing to serve.
                continue;
            }

            var relative = BucketPaths.RelativePath(item.Key, releasePrefix);
            if (relative is null || item.ETag is null || item.Size is not { } size || size < 0)
            {
                Skip(item.Key);
                continue;
            }

            selected[relative] = new BucketObject(item.Key, relative, item.ETag, size, AsUtc(item.LastModified));
            for (var slash = relative.IndexOf('/'); slash > 0; slash = relative.IndexOf('/', slash + 1))
            {
                folders.Add(relative[..slash]);
            }
        }

        // "a" and "a/b" cannot both be: a file cannot also be a folder. The folder wins.
        foreach (var folder in folders)
        {
            if (selected.Remove(folder, out var clash))
            {
                Skip(clash.Key);
            }
        }

        return selected;
    }

    private void Skip(string key)
    {
        if (_skippedKeys.Add(key))
        {
            BucketLog.KeySkipped(_logger, key);
        }
    }

    /// <summary>Points the link at <paramref name="version"/>: a new link under a temporary name, renamed over the old one.</summary>
    private void Publish(LocalVersion version)
    {
        var temporary = RootLink + ".new";
        TryDeleteFile(temporary);
        File.CreateSymbolicLink(temporary, Path.GetFileName(version.Folder));

        // Before the link names it: the index may read the version as soon as the link moves.
        _times.Add(version.Folder, version.Objects);
        if (OperatingSystem.IsWindows())
        {
            TryDeleteFile(RootLink);
            File.Move(temporary, RootLink);
        }
        else if (Interop.Libc.rename(temporary, RootLink) != 0)
        {
            throw new IOException($"Cannot point {RootLink} at {version.Folder} (errno {Marshal.GetLastPInvokeError()}).");
        }

        _current = version;
    }

    private void RemoveUnused(List<LocalVersion> donors)
    {
        foreach (var donor in donors)
        {
            if (donor != _current)
            {
                TryDelete(donor.Folder);
            }
        }
    }

    private static bool SameObjects(Dictionary<string, BucketObject> held, Dictionary<string, BucketObject> listed)
    {
        if (held.Count != listed.Count)
        {
            return false;
        }

        foreach (var (path, item) in listed)
        {
            if (!held.TryGetValue(path, out var other) || !other.SameContent(item) || other.LastModified != item.LastModified)
            {
                return false;
            }
        }

        return true;
    }

    /// <summary>The SDK's time as UTC; a listing without one (no store omits it) gets the epoch, the same on every replica.</summary>
    internal static DateTime AsUtc(DateTime? time) => time switch
    {
        null => DateTime.UnixEpoch,
        { Kind: DateTimeKind.Unspecified } t => DateTime.SpecifyKind(t, DateTimeKind.Utc),
        { } t => t.ToUniversalTime(),
    };

    private static string Shorten(string text) => text.Length <= 64 ? text : text[..64] + "…";

    private static void TryDelete(string folder)
    {
        try
        {
            Directory.Delete(folder, recursive: true);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Gone already, or left for the folder's removal when the server stops.
        }
    }

    private static void TryDeleteFile(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
        }
    }

    /// <summary>One version folder: the release it holds and the objects it holds, by relative path.</summary>
    private sealed record LocalVersion(string Folder, string Release, Dictionary<string, BucketObject> Objects);
}
