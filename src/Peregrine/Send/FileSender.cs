using System.Buffers;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.Win32.SafeHandles;

namespace Peregrine.Send;

/// <summary>
/// Sends bytes that are not held in memory: reads straight from the file into the response's
/// own buffers, so each byte is copied once in user space (file → pipe) rather than the four
/// times of Kestrel's SendFileAsync fallback (dotnet/aspnetcore#18093).
/// </summary>
internal static class FileSender
{
    // Kestrel flushes its output pipe once this many bytes are buffered; matching it keeps the
    // socket busy without letting one response hold more than that in memory.
    private const int FlushThreshold = 64 * 1024;
    private const int ReadSize = 64 * 1024;

    /// <summary>
    /// Opens the file before any header is sent, so a file that has vanished can still be
    /// answered cleanly. Returns <see langword="null"/> when it cannot be opened, or when its
    /// length is no longer the indexed one (it changed since the index).
    /// </summary>
    public static SafeFileHandle? TryOpen(string path, long expectedLength, long? expectedLastWriteTicks)
    {
        SafeFileHandle handle;
        try
        {
            handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, FileOptions.None);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            return null;
        }

        if (!IsVersion(handle, expectedLength, expectedLastWriteTicks))
        {
            handle.Dispose();
            return null;
        }

        return handle;
    }

    /// <summary>True when the open file still has the indexed length and modification time.</summary>
    private static bool IsVersion(SafeFileHandle handle, long expectedLength, long? expectedLastWriteTicks)
    {
        // One fstat(2), read the way the catalog read the indexed length and time.
        var facts = Sources.FileSystemProbe.Probe(handle);
        return facts.Length == expectedLength
            && (expectedLastWriteTicks is not { } ticks || facts.LastWriteTicks == ticks);
    }

    /// <summary>
    /// Copies <paramref name="count"/> bytes from <paramref name="offset"/>. Returns false if
    /// the file is no longer the version the headers describe: it ended early, or its length
    /// or modification time moved while it was read. The check runs after the last read and
    /// before the last bytes are committed, so a body that mixes two versions is never
    /// completed: the caller aborts the response and the client sees it cut short, never a
    /// whole body of wrong bytes.
    /// </summary>
    public static async Task<bool> CopyAsync(HttpContext context, SafeFileHandle handle, long offset, long count, long expectedLength, long? expectedLastWriteTicks, DiskReadWatch.Response watch)
    {
        var writer = context.Response.BodyWriter;
        var aborted = context.RequestAborted;
        var unflushed = 0;
        while (count > 0)
        {
            var memory = writer.GetMemory((int)Math.Min(ReadSize, count));
            if (memory.Length > count)
            {
                memory = memory[..(int)count];
            }

            int read;
            watch.Reading();
            try
            {
                read = await RandomAccess.ReadAsync(handle, memory, offset, aborted);
            }
            finally
            {
                watch.Read();
            }

            if (read == 0 || (read == count && !IsVersion(handle, expectedLength, expectedLastWriteTicks)))
            {
                return false;
            }

            writer.Advance(read);
            offset += read;
            count -= read;
            unflushed += read;
            if (unflushed >= FlushThreshold)
            {
                unflushed = 0;
                var result = await writer.FlushAsync(aborted);
                if (result.IsCanceled || result.IsCompleted)
                {
                    return true;
                }
            }
        }

        // Bytes advanced but not flushed are not sent when the request ends (seen with a 2 MB
        // file: the last partial chunk stalled), so the tail is flushed here explicitly.
        await writer.FlushAsync(aborted);
        return true;
    }
}
