using System.Buffers;
using System.Runtime.InteropServices;
using Peregrine.Interop;
using static Peregrine.Interop.Libc;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;
using Peregrine.Logging;

namespace Peregrine.Sources;

/// <summary>
/// Private copies of the published versions of files served from disk. A file held in memory is
/// its own copy; one streamed from disk has only the file itself, and a writer that rewrites it in
/// place (<c>cp</c> opens with <c>O_TRUNC</c>, keeping the inode) destroys the bytes a response is
/// reading. The version a snapshot publishes is therefore copied when it is indexed, and its
/// responses are read from the copy, which nothing else writes: the original may be truncated,
/// rewritten, renamed over or deleted while the previous version is still sent whole, until the
/// next version is published with a copy of its own.
/// </summary>
/// <remarks>
/// <para>
/// A copy is made by <c>ioctl(FICLONE)</c> where the file system shares blocks (btrfs, XFS: no
/// bytes are copied, and a later write to the original gets blocks of its own), otherwise by
/// <c>copy_file_range(2)</c> (in the kernel, no user-space buffer), and otherwise by reads and
/// writes. Files above <see cref="WatchOptions.MaxCopiedFileSize"/>, or that would take the copies
/// past <see cref="WatchOptions.CopyBudget"/>, are not copied and are read from the original as
/// before: a response finds a changed file answered with 503 (or aborted mid-send).
/// </para>
/// <para>
/// The copies live in a folder of this process's own (<see cref="InstanceFolder"/>, mode 0700)
/// under <see cref="WatchOptions.CopyDirectory"/>, removed on stop. Servers side by side share
/// that parent but never each other's folders: a folder is locked for its owner's life, and one
/// whose lock is free was left by a process that died without stopping and is removed when a
/// server next makes its own, so copies do not outlive their server.
/// </para>
/// </remarks>
internal sealed class VersionCopies : IDisposable
{
    /// <summary>
    /// How long a copy whose version was replaced is kept before it is removed: a request that
    /// took the previous snapshot opens its file within microseconds of the lookup, so this only
    /// has to outlast a stalled thread. A request that opens a copy after that is answered as one
    /// for a changed file (the original read now, or 503).
    /// </summary>
    internal static readonly TimeSpan RetireDelay = TimeSpan.FromSeconds(1);

    // Not "peregrine-versions-": the servers that named their folders so took no lock, and would
    // remove these, as these would theirs.
    private const string FolderPrefix = "peregrine-copies-";

    private readonly long _maxFileSize;
    private readonly long _budget;
    private readonly string _parent;
    private readonly ILogger _logger;
    private readonly Lock _gate = new();
    private string? _folder;
    private InstanceFolder? _instance;
    private long _used;
    private long _counter;
    private bool _unavailable;
    private bool _failureReported;
    private bool _overBudgetReported;
    private volatile bool _disposed;

    private VersionCopies(WatchOptions options, ILogger logger)
    {
        _maxFileSize = options.MaxCopiedFileSize;
        _budget = options.CopyBudget;
        _parent = string.IsNullOrWhiteSpace(options.CopyDirectory) ? Path.GetTempPath() : Path.GetFullPath(options.CopyDirectory);
        _logger = logger;
    }

    /// <summary>The copies for a watched root; <see langword="null"/> when copying is off (no watching, or a zero limit or budget).</summary>
    public static VersionCopies? For(PeregrineOptions options, ILogger logger)
        => options.Watch is { Enabled: true, MaxCopiedFileSize: > 0, CopyBudget: > 0 } ? new VersionCopies(options.Watch, logger) : null;

    /// <summary>Bytes held in copies now, retired ones included until they are removed.</summary>
    public long UsedBytes => Interlocked.Read(ref _used);

    /// <summary>The folder this process keeps its copies in, once the first copy made it.</summary>
    public string? Folder => _folder;

    /// <summary>
    /// Copies the file open as <paramref name="source"/> (<paramref name="length"/> bytes, as
    /// indexed) and gives the copy the indexed modification time, so that a response checks it the
    /// way it checks any file. Returns the copy's path, or <see langword="null"/> when the file is
    /// not to be copied (too large, over the budget, the folder unusable) or when the source did not
    /// hold <paramref name="length"/> bytes while it was copied (a writer is at it; the caller
    /// sees that with its own length and time check).
    /// </summary>
    public string? TryCopy(SafeFileHandle source, long length, long lastWriteTicks)
    {
        if (_disposed || length > _maxFileSize || !TryReserve(length))
        {
            return null;
        }

        if (EnsureFolder() is not { } folder)
        {
            Interlocked.Add(ref _used, -length);
            return null;
        }

        var path = Path.Combine(folder, Interlocked.Increment(ref _counter).ToString(System.Globalization.CultureInfo.InvariantCulture));
        try
        {
            using (var target = File.OpenHandle(path, FileMode.CreateNew, FileAccess.ReadWrite, FileShare.Read))
            {
                if (Copy(source, target, length) && RandomAccess.GetLength(target) == length)
                {
                    File.SetLastWriteTimeUtc(target, new DateTime(lastWriteTicks, DateTimeKind.Utc));
                    return path;
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Out of space, or the folder was removed under us: this version is read from the
            // original, as a file beyond the limit is.
            ReportUnavailable(ex.Message);
        }

        Discard(path, length);
        return null;
    }

    /// <summary>Removes a copy that was never published (its version was not taken after all).</summary>
    public void Discard(string path, long length)
    {
        try
        {
            File.Delete(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Left for the folder's removal on stop.
        }

        Interlocked.Add(ref _used, -length);
    }

    /// <summary>
    /// Removes the copy of a version a snapshot no longer holds, after <see cref="RetireDelay"/>:
    /// responses already reading it keep their open file, whatever happens to its name.
    /// </summary>
    public void Retire(string path, long length)
        => _ = Task.Delay(RetireDelay).ContinueWith(
            static (_, state) =>
            {
                var (copies, path, length) = ((VersionCopies, string, long))state!;
                copies.Discard(path, length);
            },
            (this, path, length),
            CancellationToken.None,
            TaskContinuationOptions.None,
            TaskScheduler.Default);

    /// <summary>True when <paramref name="path"/> is one of this process's copies.</summary>
    public bool Holds(string? path)
        => path is not null && _folder is { } folder && path.Length > folder.Length && path.StartsWith(folder, StringComparison.Ordinal) && path[folder.Length] == '/';

    private bool TryReserve(long length)
    {
        if (Interlocked.Add(ref _used, length) <= _budget)
        {
            return true;
        }

        Interlocked.Add(ref _used, -length);
        if (!_overBudgetReported)
        {
            _overBudgetReported = true;
            PeregrineLog.CopyBudgetReached(_logger, _budget);
        }

        return false;
    }

    /// <summary>Makes this process's folder on first use (a site with no large file has none), after removing those of dead processes.</summary>
    private string? EnsureFolder()
    {
        if (_folder is { } made)
        {
            return made;
        }

        lock (_gate)
        {
            if (_folder is not null || _unavailable || _disposed)
            {
                return _folder;
            }

            try
            {
                _instance = InstanceFolder.Create(_parent, FolderPrefix);
                _folder = _instance.Path;
                if (!_instance.IsLocked)
                {
                    PeregrineLog.CopiesUnlocked(_logger, _parent);
                }

                return _folder;
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException)
            {
                _unavailable = true;
                ReportUnavailable(ex.Message);
                return null;
            }
        }
    }

    private void ReportUnavailable(string reason)
    {
        if (!_failureReported)
        {
            _failureReported = true;
            PeregrineLog.CopiesUnavailable(_logger, _parent, reason);
        }
    }

    /// <summary>
    /// Copies <paramref name="length"/> bytes; false when the source ended early. A clone takes
    /// the file whole, whatever its length now: the caller's length check sees a difference.
    /// </summary>
    private static bool Copy(SafeFileHandle source, SafeFileHandle target, long length)
    {
        if (length == 0)
        {
            return true;
        }

        if (PlatformParts.IsNative && ioctl((int)target.DangerousGetHandle(), Ficlone, (int)source.DangerousGetHandle()) == 0)
        {
            return true;
        }

        long copied = 0;
        if (PlatformParts.IsNative)
        {
            copied = CopyInKernel(source, target, length);
            if (copied < 0)
            {
                copied = 0;
                RandomAccess.SetLength(target, 0);
            }
            else
            {
                return copied == length;
            }
        }

        var buffer = ArrayPool<byte>.Shared.Rent(1024 * 1024);
        try
        {
            while (copied < length)
            {
                var read = RandomAccess.Read(source, buffer.AsSpan(0, (int)Math.Min(buffer.Length, length - copied)), copied);
                if (read == 0)
                {
                    return false;
                }

                RandomAccess.Write(target, buffer.AsSpan(0, read), copied);
                copied += read;
            }

            return true;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>copy_file_range(2) until <paramref name="length"/> bytes or the source's end; -1 when the kernel cannot (another file system, an old kernel).</summary>
    private static unsafe long CopyInKernel(SafeFileHandle source, SafeFileHandle target, long length)
    {
        long inOffset = 0, outOffset = 0;
        var input = (int)source.DangerousGetHandle();
        var output = (int)target.DangerousGetHandle();
        while (inOffset < length)
        {
            var n = copy_file_range(input, &inOffset, output, &outOffset, (nuint)Math.Min(length - inOffset, 1L << 30), 0);
            if (n < 0)
            {
                return inOffset == 0 ? -1 : throw new IOException($"copy_file_range failed (errno {Marshal.GetLastPInvokeError()})");
            }

            if (n == 0)
            {
                break;
            }
        }

        return inOffset;
    }

    /// <summary>Removes this process's folder and every copy in it.</summary>
    public void Dispose()
    {
        lock (_gate)
        {
            _disposed = true;
            _instance?.Dispose();
        }
    }
}
