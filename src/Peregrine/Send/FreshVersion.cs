using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Sources;

namespace Peregrine.Send;

/// <summary>One version of a file read whole, with the tag and date that describe it.</summary>
internal sealed class FreshVersion
{
    private FreshVersion(byte[] content, string etag, DateTimeOffset lastModified)
    {
        Content = content;
        ETag = etag;
        LastModified = lastModified;
    }

    public byte[] Content { get; }

    public string ETag { get; }

    public DateTimeOffset LastModified { get; }

    /// <summary>
    /// Reads the file whole if it is at most <paramref name="limit"/> bytes and holds still
    /// while it is read (same length and modification time before and after); tries three
    /// times. <see langword="null"/> when it is gone (<paramref name="missing"/>), too large,
    /// or keeps changing. A version younger than <see cref="IncrementalUpdate.SettleMargin"/>
    /// must also hold still until it is that old (the settle rule): a writer that has truncated
    /// the file and not yet written holds still too, for a moment. One younger than
    /// <paramref name="refuseYoungerThan"/> is refused: where the watcher follows writers to their
    /// close, it publishes the new version itself shortly, and a young file read here may be a
    /// writer's that the watcher has not yet seen.
    /// </summary>
    /// <remarks>
    /// A file whose length changed but whose time is still <paramref name="indexedTicks"/> is
    /// being truncated: the file system sets the new length before the new time, and sends
    /// the change event after both.
    /// </remarks>
    public static FreshVersion? TryRead(string path, long limit, long indexedTicks, TimeSpan refuseYoungerThan, out bool missing)
    {
        missing = false;
        for (var attempt = 0; attempt < 3; attempt++)
        {
            try
            {
                using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
                var (_, length, before) = Sources.FileSystemProbe.Probe(handle);
                if (length > limit)
                {
                    return null;
                }

                var content = new byte[length];
                var read = 0;
                while (read < content.Length)
                {
                    var n = RandomAccess.Read(handle, content.AsSpan(read), read);
                    if (n == 0)
                    {
                        break;
                    }

                    read += n;
                }

                if (read == length && Sources.FileSystemProbe.Probe(handle) is { } after && after.Length == length && after.LastWriteTicks == before)
                {
                    if (before == indexedTicks || DateTime.UtcNow.Ticks - before < refuseYoungerThan.Ticks)
                    {
                        return null;
                    }

                    var young = before + IncrementalUpdate.SettleMargin.Ticks - DateTime.UtcNow.Ticks;
                    if (young > 0)
                    {
                        // Rare (a file changed within the last few milliseconds and not yet
                        // re-indexed), and short: the thread waits at most the margin.
                        Thread.Sleep(TimeSpan.FromTicks(young));
                        var settled = Sources.FileSystemProbe.Probe(handle);
                        if (settled.Length != length || settled.LastWriteTicks != before)
                        {
                            continue;
                        }
                    }

                    var seconds = before - (before % TimeSpan.TicksPerSecond);
                    return new FreshVersion(content, EntityTag.Compute(content), new DateTimeOffset(seconds, TimeSpan.Zero));
                }
            }
            catch (Exception ex) when (ex is FileNotFoundException or DirectoryNotFoundException)
            {
                missing = true;
                return null;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                return null;
            }
        }

        return null;
    }
}
