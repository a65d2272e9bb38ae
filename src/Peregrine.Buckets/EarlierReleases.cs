using System.Collections.Concurrent;
using Amazon.S3.Model;
using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// The earlier versions of a release's fingerprinted files, for the compression dictionaries
/// (RFC 9842), taken from the bucket's own history so that every replica keeps the same ones
/// whenever it started (docs/serving.md, "Compression dictionaries"): the releases under
/// <c>PREFIX/releases/</c> uploaded before the release in force, the latest
/// <see cref="BucketOptions.EarlierReleases"/> of them, each release's time being the newest
/// Last-Modified among its objects (its upload's end; ties go by id). Their fingerprinted files
/// are downloaded into <c>earlier/{release}/</c> of the process's folder, beside the version
/// folders, and never served: they are only the bytes deltas are made against.
/// </summary>
/// <remarks>
/// Only with a pointer: without one the prefix holds one site and no history, and the versions
/// kept are the fingerprinted files it holds. A release is not changed once named, so a file
/// already downloaded at its listed length is reused. Failing to fetch them never fails the
/// sync: the release is served, with a log line, and the kept versions are those in force.
/// </remarks>
internal sealed class EarlierReleases
{
    private const string FolderName = "earlier";

    private readonly BucketClient _client;
    private readonly BucketOptions _options;
    private readonly string _folder;
    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<string, IReadOnlyList<KeyValuePair<string, string>>> _byVersion = new(StringComparer.Ordinal);

    public EarlierReleases(BucketClient client, BucketOptions options, string folder, ILogger logger)
    {
        _client = client;
        _options = options;
        _folder = Path.Combine(folder, FolderName);
        _logger = logger;
    }

    /// <summary>The earlier versions of the version folder <paramref name="root"/> (a real path), oldest first; null for one not held.</summary>
    public IReadOnlyList<KeyValuePair<string, string>>? For(string root)
        => _byVersion.TryGetValue(Path.GetFileName(root), out var files) ? files : null;

    /// <summary>Forgets the version in <paramref name="folder"/>, once it is removed.</summary>
    public void Forget(string folder) => _byVersion.TryRemove(Path.GetFileName(folder), out _);

    /// <summary>
    /// Finds and fetches the earlier versions for <paramref name="versionFolder"/>, which holds
    /// <paramref name="release"/> (listed under <paramref name="releasesPrefix"/>, or null
    /// without a pointer), before the link names it.
    /// </summary>
    public async Task PrepareAsync(string versionFolder, string release, string? releasesPrefix, Dictionary<string, BucketObject> inForce, CancellationToken cancellationToken)
    {
        var files = new List<KeyValuePair<string, string>>();
        try
        {
            if (releasesPrefix is not null && _options.EarlierReleases > 0 && _options.DictionaryFiles is { } isDictionary)
            {
                var chosen = Choose(await _client.ListAsync(releasesPrefix, cancellationToken).ConfigureAwait(false), releasesPrefix, release);
                foreach (var (id, objects) in chosen)
                {
                    foreach (var item in objects.OrderBy(o => o.RelativePath, StringComparer.Ordinal))
                    {
                        // The same bytes as the file in force need no second copy: it is kept anyway.
                        if (!isDictionary(item.RelativePath) || (inForce.TryGetValue(item.RelativePath, out var current) && current.SameContent(item)))
                        {
                            continue;
                        }

                        files.Add(new("/" + item.RelativePath, await FetchAsync(id, item, cancellationToken).ConfigureAwait(false)));
                    }
                }

                RemoveOthers(chosen.Select(c => c.Id));
            }
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            files.Clear();
            BucketLog.EarlierReleasesFailed(_logger, release, ex.Message);
        }

        _byVersion[Path.GetFileName(versionFolder)] = files;
    }

    /// <summary>The releases before <paramref name="release"/> by upload time, the latest <see cref="BucketOptions.EarlierReleases"/>, oldest first.</summary>
    private List<(string Id, List<BucketObject> Objects)> Choose(List<S3Object> listed, string releasesPrefix, string release)
    {
        var releases = new Dictionary<string, List<BucketObject>>(StringComparer.Ordinal);
        foreach (var item in listed)
        {
            var rest = item.Key.AsSpan(releasesPrefix.Length);
            var slash = rest.IndexOf('/');
            if (slash <= 0 || item.ETag is null || item.Size is not { } size || size < 0 || size > _options.EarlierMaxBytes)
            {
                continue;
            }

            var id = rest[..slash].ToString();
            if (!BucketPaths.IsSegment(id) || BucketPaths.RelativePath(item.Key, releasesPrefix + id + "/") is not { } relative)
            {
                continue;
            }

            if (!releases.TryGetValue(id, out var objects))
            {
                objects = [];
                releases[id] = objects;
            }

            objects.Add(new BucketObject(item.Key, relative, item.ETag, size, BucketSync.AsUtc(item.LastModified)));
        }

        if (!releases.TryGetValue(release, out var own) || own.Count == 0)
        {
            return [];
        }

        var inForce = (Time: own.Max(o => o.LastModified), Id: release);
        return releases
            .Where(r => r.Value.Count > 0)
            .Select(r => (Id: r.Key, Objects: r.Value, Time: r.Value.Max(o => o.LastModified)))
            .Where(r => r.Time < inForce.Time || (r.Time == inForce.Time && string.CompareOrdinal(r.Id, inForce.Id) < 0))
            .OrderByDescending(r => r.Time).ThenByDescending(r => r.Id, StringComparer.Ordinal)
            .Take(_options.EarlierReleases)
            .Reverse()
            .Select(r => (r.Id, r.Objects))
            .ToList();
    }

    private async Task<string> FetchAsync(string release, BucketObject item, CancellationToken cancellationToken)
    {
        var path = Path.Combine(_folder, release, item.RelativePath);
        if (File.Exists(path) && new FileInfo(path).Length == item.Size)
        {
            return path;
        }

        Directory.CreateDirectory(Path.GetDirectoryName(path)!);
        var temporary = path + ".download";
        File.Delete(temporary);
        await _client.DownloadAsync(item, temporary, cancellationToken).ConfigureAwait(false);
        File.Move(temporary, path, overwrite: true);
        return path;
    }

    private void RemoveOthers(IEnumerable<string> kept)
    {
        if (!Directory.Exists(_folder))
        {
            return;
        }

        var keep = new HashSet<string>(kept, StringComparer.Ordinal);
        foreach (var folder in Directory.EnumerateDirectories(_folder))
        {
            if (!keep.Contains(Path.GetFileName(folder)))
            {
                try
                {
                    Directory.Delete(folder, recursive: true);
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    // Left for the folder's removal when the server stops.
                }
            }
        }
    }
}
