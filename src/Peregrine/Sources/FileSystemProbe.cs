using System.Runtime.InteropServices;
using Peregrine.Interop;
using static Peregrine.Interop.Libc;

namespace Peregrine.Sources;

/// <summary>Device and inode number: which file a path names, whatever the path (a rename or a re-pointed link changes it).</summary>
internal readonly record struct FileNode(ulong Device, ulong Inode);

/// <summary>What a path is, with its length and modification time in ticks (UTC).</summary>
internal readonly record struct FileFacts(FileKind Kind, long Length, long LastWriteTicks);

internal enum FileKind : byte
{
    Missing,
    Regular,
    Directory,

    /// <summary>A symbolic link, when links are not followed.</summary>
    Link,

    /// <summary>A FIFO, socket or device: opening one can block forever, so it is never served.</summary>
    Other,
}

/// <summary>
/// The file system questions .NET cannot answer cheaply: the canonical path of a file with every
/// symbolic link resolved (realpath(3)), used to keep links from escaping the root; whether a
/// path is a regular file rather than a FIFO or device; and a file's length and modification
/// time from one stat(2), lstat(2) or fstat(2).
/// </summary>
/// <remarks>
/// Not for index time only. The scan and the entry builder use it for every file; the watcher
/// checks the root's identity with it on a timer; the compressor checks sidecars with it; and a
/// request answered from disk calls <see cref="Probe(Microsoft.Win32.SafeHandles.SafeFileHandle)"/>
/// (one fstat(2) of the open file) to check that the file is still the indexed version, before
/// and while it is sent. No request path is ever passed here, only paths the index found.
/// </remarks>
internal static class FileSystemProbe
{
    internal const int S_IFMT = 0xF000;
    internal const int S_IFREG = 0x8000;
    internal const int S_IFDIR = 0x4000;
    internal const int S_IFLNK = 0xA000;

    private static readonly StatLayout s_layout = StatLayout.Current;

    // The stat(2) layout read here is Linux's: elsewhere, and on the portable path, .NET answers.
    private static bool s_nativeUnavailable = !PlatformParts.IsNative;

    /// <summary>The canonical path, or <see langword="null"/> when the path does not resolve.</summary>
    public static string? RealPath(string path)
    {
        if (!s_nativeUnavailable)
        {
            try
            {
                var resolved = realpath(path, 0);
                if (resolved == 0)
                {
                    return null;
                }

                try
                {
                    return Marshal.PtrToStringUTF8(resolved);
                }
                finally
                {
                    free(resolved);
                }
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
        }

        return ResolveLinks(path);
    }

    /// <summary>Linux's limit on links followed in one resolution (MAXSYMLINKS): a loop ends there.</summary>
    private const int MaxLinks = 40;

    /// <summary>
    /// What realpath(3) does, with .NET's calls: every component from the root down, each link
    /// replaced by its target before the next component is looked at, and ".." taken from the
    /// resolved folder rather than the path as written. The portable parts' answer, and the one
    /// that keeps a link from escaping the root through a link in the middle of its target
    /// (<c>a -> up/outside/secret</c> with <c>up -> ..</c>), which resolving the last
    /// component alone (<see cref="FileSystemInfo.ResolveLinkTarget(bool)"/>) lets through.
    /// </summary>
    /// <returns>The canonical path, or <see langword="null"/> when a component is missing, a link dangles, or links loop.</returns>
    internal static string? ResolveLinks(string path)
    {
        // Not Path.GetFullPath, which takes ".." away with the component before it, a link or not.
        var full = Path.IsPathFullyQualified(path) ? path : Path.Join(Environment.CurrentDirectory, path);
        var resolved = Path.GetPathRoot(full)!;
        var rest = new List<string>(Components(full[resolved.Length..]));
        var links = 0;
        for (var i = 0; i < rest.Count; i++)
        {
            var part = rest[i];
            if (part == ".")
            {
                continue;
            }

            if (part == "..")
            {
                resolved = Path.GetDirectoryName(resolved) ?? resolved;
                continue;
            }

            var next = Path.Join(resolved, part);
            FileSystemInfo info = new FileInfo(next);
            if (info.LinkTarget is { } target)
            {
                if (++links > MaxLinks)
                {
                    return null;
                }

                // The target's components go where the link's was, and are resolved in turn.
                if (Path.IsPathRooted(target))
                {
                    resolved = Path.GetPathRoot(target)!;
                    target = target[resolved.Length..];
                }

                rest.InsertRange(i + 1, Components(target));
                continue;
            }

            if (!File.Exists(next) && !Directory.Exists(next))
            {
                return null;
            }

            resolved = next;
        }

        return resolved;
    }

    private static string[] Components(string path)
        => path.Split([Path.DirectorySeparatorChar, Path.AltDirectorySeparatorChar], StringSplitOptions.RemoveEmptyEntries);

    /// <summary>What the path is, following symbolic links.</summary>
    public static FileKind KindOf(string path) => Probe(path).Kind;

    /// <summary>
    /// What <paramref name="path"/> is, with its length and modification time (ticks, UTC, as
    /// <see cref="File.GetLastWriteTimeUtc(string)"/> gives them), from one stat(2), or lstat(2)
    /// when <paramref name="followLinks"/> is false (a link is then reported as
    /// <see cref="FileKind.Link"/>): the scan needs all of it for every file.
    /// </summary>
    public static unsafe FileFacts Probe(string path, bool followLinks = true)
    {
        if (!s_nativeUnavailable && s_layout.IsKnown)
        {
            try
            {
                byte* buffer = stackalloc byte[StatBufferSize];
                return (followLinks ? stat(path, buffer) : lstat(path, buffer)) == 0 ? FactsOf(buffer) : default;
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
        }

        FileSystemInfo info = Directory.Exists(path) ? new DirectoryInfo(path) : new FileInfo(path);
        if (!followLinks && info.LinkTarget is not null)
        {
            return new FileFacts(FileKind.Link, 0, 0);
        }

        return info switch
        {
            DirectoryInfo directory => new FileFacts(FileKind.Directory, 0, directory.LastWriteTimeUtc.Ticks),
            FileInfo { Exists: true } file => new FileFacts(FileKind.Regular, file.Length, file.LastWriteTimeUtc.Ticks),
            _ => default,
        };
    }

    /// <summary>Length and modification time of an open file, from one fstat(2).</summary>
    public static unsafe FileFacts Probe(Microsoft.Win32.SafeHandles.SafeFileHandle handle)
    {
        if (!s_nativeUnavailable && s_layout.IsKnown)
        {
            var added = false;
            try
            {
                handle.DangerousAddRef(ref added);
                byte* buffer = stackalloc byte[StatBufferSize];
                if (fstat((int)handle.DangerousGetHandle(), buffer) == 0)
                {
                    return FactsOf(buffer);
                }
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
            finally
            {
                if (added)
                {
                    handle.DangerousRelease();
                }
            }
        }

        return new FileFacts(FileKind.Regular, RandomAccess.GetLength(handle), File.GetLastWriteTimeUtc(handle).Ticks);
    }

    // The seconds since 1970 of DateTime's first and last second.
    private static readonly long MinUnixSeconds = (DateTime.MinValue.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerSecond;
    private static readonly long MaxUnixSeconds = (DateTime.MaxValue.Ticks - DateTime.UnixEpoch.Ticks) / TimeSpan.TicksPerSecond;

    private static unsafe FileFacts FactsOf(byte* buffer)
    {
        var kind = (*(uint*)(buffer + s_layout.Mode) & S_IFMT) switch
        {
            S_IFREG => FileKind.Regular,
            S_IFDIR => FileKind.Directory,
            S_IFLNK => FileKind.Link,
            _ => FileKind.Other,
        };

        var length = *(long*)(buffer + s_layout.Size);

        // A file system stores times that DateTime cannot hold (touch -d @-99999999999 on tmpfs):
        // such a time is taken as the nearest one it can, rather than failing the index.
        var seconds = Math.Clamp(*(long*)(buffer + s_layout.ModifiedSeconds), MinUnixSeconds, MaxUnixSeconds);
        var ticks = DateTime.UnixEpoch.Ticks + (seconds * TimeSpan.TicksPerSecond) + Math.Clamp(*(long*)(buffer + s_layout.ModifiedNanoseconds) / 100, 0, TimeSpan.TicksPerSecond - 1);
        return new FileFacts(kind, length, ticks);
    }

    public static unsafe FileNode NodeOf(string path)
    {
        if (!s_nativeUnavailable && s_layout.IsKnown)
        {
            try
            {
                byte* buffer = stackalloc byte[StatBufferSize];
                if (stat(path, buffer) == 0)
                {
                    return new FileNode(*(ulong*)(buffer + s_layout.Device), *(ulong*)(buffer + s_layout.Inode));
                }
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
        }

        // The portable parts have no inode: the folder's creation time stands in for it (the
        // birth time where the system keeps one, as Windows and macOS do), which a folder keeps
        // when it is renamed and another folder renamed into its place does not share.
        try
        {
            var created = Directory.GetCreationTimeUtc(path);
            return created.Year > 1601 ? new FileNode(PortableDevice, (ulong)created.Ticks) : default;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return default;
        }
    }

    /// <summary>The <see cref="FileNode.Device"/> of a node the portable parts made from a creation time.</summary>
    private const ulong PortableDevice = ulong.MaxValue;
}
