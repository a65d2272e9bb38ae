using System.Collections.Concurrent;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// The Last-Modified of every file of the versions held, as the listing that made each version
/// gave it: what the index states instead of the file's modification time
/// (<see cref="PeregrineOptions.ListedLastModified"/>).
/// </summary>
/// <remarks>
/// An object whose bytes did not change is linked from the previous version, so its file keeps
/// the time it was first written with, which differs from replica to replica (one that started
/// after the release was uploaded downloaded it with the new time). The listing is the same for
/// every replica, so its time is the one they all send. Written by the sync loop (a version is
/// added whole, before the link names it), read by the catalog's publisher.
/// </remarks>
internal sealed class ListedTimes
{
    private readonly ConcurrentDictionary<string, Dictionary<string, BucketObject>> _versions = new(StringComparer.Ordinal);

    /// <summary>Adds a version whose every file is in place; <paramref name="objects"/> is not changed after.</summary>
    public void Add(string folder, Dictionary<string, BucketObject> objects) => _versions[RealFolder(folder)] = objects;

    /// <summary>Forgets the version in <paramref name="folder"/>, once it is removed.</summary>
    public void Forget(string folder)
    {
        var name = Path.GetFileName(folder);
        foreach (var held in _versions.Keys)
        {
            // By name: the folder named for removal may be reached through other parents than its real path.
            if (Path.GetFileName(held) == name)
            {
                _versions.TryRemove(held, out _);
            }
        }
    }

    /// <summary>
    /// The listed time, in UTC ticks, of the file <paramref name="path"/> (<c>/a/b.html</c>) of the
    /// version in <paramref name="root"/> (a real path); null for a folder this source does not hold.
    /// </summary>
    public long? Find(string root, string path)
    {
        if (!_versions.TryGetValue(root, out var objects))
        {
            return null;
        }

        var lookup = objects.GetAlternateLookup<ReadOnlySpan<char>>();
        return lookup.TryGetValue(path.AsSpan().TrimStart('/'), out var item) ? item.LastModified.Ticks : null;
    }

    /// <summary>The folder as the index reaches it: every link resolved, as <c>Sources/Mount</c> resolves a root.</summary>
    private static string RealFolder(string folder) => FileSystemProbe.RealPath(folder) ?? Path.GetFullPath(folder);
}
