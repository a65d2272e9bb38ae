using System.Runtime.InteropServices;

namespace Peregrine.Catalog;

/// <summary>Device and inode: which file a path names, whatever the path.</summary>
internal readonly record struct FileIdentity(ulong Device, ulong Inode);

internal enum FileKind : byte
{
    Missing,
    Regular,
    Directory,

    /// <summary>A FIFO, socket or device: opening one can block forever, so it is never served.</summary>
    Other,
}

/// <summary>
/// The two file system questions .NET cannot answer: the canonical path of a file with every
/// symbolic link resolved (realpath(3)), used to keep links from escaping the root, and
/// whether a path is a regular file rather than a FIFO or device. Index time only.
/// </summary>
internal static partial class FileSystemProbe
{
    private const int S_IFMT = 0xF000;
    private const int S_IFREG = 0x8000;
    private const int S_IFDIR = 0x4000;

    // Offset of st_mode in struct stat: x86-64 {dev, ino, nlink(8), mode}; arm64 {dev, ino, mode}.
    private static readonly int s_modeOffset = RuntimeInformation.ProcessArchitecture switch
    {
        Architecture.X64 => 24,
        Architecture.Arm64 => 16,
        _ => -1,
    };

    private static bool s_nativeUnavailable = !OperatingSystem.IsLinux();

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

        // Elsewhere: resolve the final link only. Intermediate links stay as written.
        var info = new FileInfo(path);
        if (!info.Exists && !Directory.Exists(path))
        {
            return null;
        }

        var target = info.LinkTarget is null ? null : info.ResolveLinkTarget(returnFinalTarget: true);
        return Path.GetFullPath(target?.FullName ?? path);
    }

    /// <summary>What the path is, following symbolic links.</summary>
    public static unsafe FileKind KindOf(string path)
    {
        if (!s_nativeUnavailable && s_modeOffset >= 0)
        {
            try
            {
                // struct stat is 144 bytes on x86-64 and 128 on arm64.
                byte* buffer = stackalloc byte[256];
                if (stat(path, buffer) != 0)
                {
                    return FileKind.Missing;
                }

                var mode = *(uint*)(buffer + s_modeOffset) & S_IFMT;
                return mode switch
                {
                    S_IFREG => FileKind.Regular,
                    S_IFDIR => FileKind.Directory,
                    _ => FileKind.Other,
                };
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
        }

        if (Directory.Exists(path))
        {
            return FileKind.Directory;
        }

        return File.Exists(path) ? FileKind.Regular : FileKind.Missing;
    }

    /// <summary>
    /// The device and inode of a path (following links), or default where they cannot be
    /// read: a folder renamed into the root's place has the same path but not the same inode.
    /// </summary>
    public static unsafe FileIdentity IdentityOf(string path)
    {
        if (!s_nativeUnavailable && s_modeOffset >= 0)
        {
            try
            {
                byte* buffer = stackalloc byte[256];
                if (stat(path, buffer) == 0)
                {
                    // st_dev and st_ino lead struct stat on both x86-64 and arm64.
                    return new FileIdentity(*(ulong*)buffer, *(ulong*)(buffer + 8));
                }
            }
            catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
            {
                s_nativeUnavailable = true;
            }
        }

        return default;
    }

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    private static partial nint realpath(string path, nint resolved);

    [LibraryImport("libc")]
    private static partial void free(nint pointer);

    [LibraryImport("libc", StringMarshalling = StringMarshalling.Utf8)]
    private static unsafe partial int stat(string path, byte* buffer);
}
