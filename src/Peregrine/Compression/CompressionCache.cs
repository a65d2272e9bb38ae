using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>
/// Compressed bytes kept on disk across restarts, one file per (content, coding, level):
/// <c>{identity ETag}.{coding}.{level}.v1</c>. The name carries the hash of the bytes the file
/// must decode to, so a cache file is checked by decoding it, and a truncated or damaged one
/// is found and replaced rather than served. An empty file records that the coding did not
/// save enough to keep, so an incompressible file is not compressed again on every start.
/// </summary>
internal sealed class CompressionCache
{
    private readonly string _directory;

    private CompressionCache(string directory)
    {
        _directory = directory;
    }

    /// <summary>The cache over <paramref name="directory"/>, created if missing; <see langword="null"/> with the reason when it cannot be.</summary>
    public static CompressionCache? TryOpen(string directory, out string? reason)
    {
        try
        {
            var full = Path.GetFullPath(directory);
            Directory.CreateDirectory(full);
            reason = null;
            return new CompressionCache(full);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            reason = ex.Message;
            return null;
        }
    }

    /// <summary>The cache file for one coding of the content whose (quoted) identity ETag is given.</summary>
    public string PathFor(string identityETag, ContentCoding coding)
    {
        // The tag is base64url (RFC 4648 §5), which is safe in a file name on every platform.
        return Path.Combine(_directory, identityETag.Trim('"') + "." + Encoders.CacheSuffix(coding));
    }

    /// <summary>
    /// Writes the file atomically: to a temporary name in the same folder, then renamed over the
    /// final name, so a reader (or a restart after a crash) sees the old file or the whole new one.
    /// </summary>
    public bool TryWrite(string path, ReadOnlySpan<byte> bytes, out string? reason)
    {
        try
        {
            WriteAtomically(path, bytes);
            reason = null;
            return true;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            reason = ex.Message;
            return false;
        }
    }

    /// <summary>
    /// <see cref="TryWrite"/>'s write, which throws what it meets (the temporary file removed
    /// first): for a caller that reports its failures itself.
    /// </summary>
    public static void WriteAtomically(string path, ReadOnlySpan<byte> bytes)
    {
        var temporary = path + "." + Guid.NewGuid().ToString("N") + ".tmp";
        try
        {
            using (var stream = new FileStream(temporary, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1))
            {
                stream.Write(bytes);
                stream.Flush(flushToDisk: true);
            }

            File.Move(temporary, path, overwrite: true);
        }
        catch
        {
            TryDelete(temporary);
            throw;
        }
    }

    public static void TryDelete(string path)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Left behind; the next write renames over it.
        }
    }
}
