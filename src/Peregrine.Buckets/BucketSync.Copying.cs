namespace Peregrine.Sources.Bucket;

/// <summary>
/// The copy: a release's files put into a new version folder, each linked from a version that
/// holds the same bytes, or downloaded.
/// </summary>
internal sealed partial class BucketSync
{
    /// <summary>Puts every listed object into <paramref name="version"/>'s folder: linked from a donor when unchanged, downloaded otherwise.</summary>
    /// <remarks>
    /// A release named by the pointer is uploaded whole, so its unchanged objects carry new times;
    /// they are linked all the same, since the index takes the time from the listing: a deploy
    /// downloads what changed and links the rest. Downloads wait on the network, so they run
    /// <see cref="BucketOptions.Downloads"/> at a time.
    /// </remarks>
    private async Task<(int Downloaded, long Bytes)> FillAsync(LocalVersion version, Dictionary<string, BucketObject> listed, List<LocalVersion> donors, CancellationToken cancellationToken)
    {
        Directory.CreateDirectory(version.Folder);
        var folders = new HashSet<string>(StringComparer.Ordinal);
        foreach (var item in listed.Values)
        {
            if (Path.GetDirectoryName(Path.Combine(version.Folder, item.RelativePath)) is { } parent && folders.Add(parent))
            {
                Directory.CreateDirectory(parent);
            }
        }

        long bytes = 0;
        var downloaded = 0;
        var parallel = new ParallelOptions { MaxDegreeOfParallelism = _options.Downloads, CancellationToken = cancellationToken };
        await Parallel.ForEachAsync(listed.Values, parallel, async (item, token) =>
        {
            var path = Path.Combine(version.Folder, item.RelativePath);
            if (!TryReuse(item, path, donors))
            {
                if (BeforeDownload is { } hook)
                {
                    await hook(item, token).ConfigureAwait(false);
                }

                Interlocked.Add(ref bytes, await _client.DownloadAsync(item, path, token).ConfigureAwait(false));
                File.SetLastWriteTimeUtc(path, item.LastModified);
                Interlocked.Increment(ref downloaded);
            }

            lock (version.Objects)
            {
                version.Objects[item.RelativePath] = item;
            }
        }).ConfigureAwait(false);
        return (downloaded, bytes);
    }

    /// <summary>Links (or where links cannot be made, copies) <paramref name="item"/> from a version that holds the same bytes; false when none does.</summary>
    /// <remarks>
    /// The link shares the earlier file's inode and so its modification time, which may be an
    /// earlier upload's: that time is only the file's version for the index (how it tells a file
    /// changed on disk), never its Last-Modified, which is the listing's (<see cref="ListedTimes"/>).
    /// </remarks>
    private static bool TryReuse(BucketObject item, string path, List<LocalVersion> donors)
    {
        foreach (var donor in donors)
        {
            if (!donor.Objects.TryGetValue(item.RelativePath, out var held) || !held.SameContent(item))
            {
                continue;
            }

            var source = Path.Combine(donor.Folder, item.RelativePath);
            try
            {
                if (!OperatingSystem.IsWindows() && Interop.Libc.link(source, path) == 0)
                {
                    return true;
                }

                // No link (another file system under the folder, a link limit reached, Windows):
                // a copy of its own.
                File.Copy(source, path);
                return true;
            }
            catch (IOException)
            {
                // The donor's file is gone (removed by hand): download it instead.
                TryDeleteFile(path);
            }
        }

        return false;
    }
}
