namespace Peregrine.Interop;

/// <summary>
/// The one place that decides between the native parts, which call Linux directly, and the
/// portable parts that .NET provides everywhere. Decided once per process.
/// </summary>
/// <remarks>
/// <para>
/// Native (Linux, the switch unset): inotify(7) watching with leases to ask whether a writer still
/// has a file open; copies made by <c>FICLONE</c> or <c>copy_file_range(2)</c>; stat(2) and
/// realpath(3) for what a path is; <c>SCHED_IDLE</c> for the final compression pass;
/// <c>malloc_trim(3)</c> after it; zstd from the system's <c>libzstd.so.1</c>.
/// </para>
/// <para>
/// Portable (Windows, macOS, or <c>PEREGRINE_PORTABLE=1</c>): <see cref="FileSystemWatcher"/>
/// (any event asks for a rescan, and a file is taken once it has held still, as no watcher says
/// when its writer closed it); copies by reads and writes; <see cref="FileInfo"/> for what a
/// path is; the thread priority .NET offers; no zstd (no managed zstd ships with .NET, and the
/// library takes no package for it: browsers that accept zstd accept br, which .NET makes).
/// </para>
/// <para>
/// The switch does not change what is plain POSIX and decided by the operating system alone:
/// <c>flock(2)</c> on the folders of this process's copies (<c>Sources/InstanceFolder</c>, a lock
/// file on Windows), and <c>link(2)</c> and <c>rename(2)</c> in a bucket's version folders.
/// </para>
/// </remarks>
internal static class PlatformParts
{
    /// <summary>The environment variable that forces the portable parts on Linux: <c>1</c> or <c>true</c>.</summary>
    public const string PortableVariable = "PEREGRINE_PORTABLE";

    /// <summary>True when <see cref="PortableVariable"/> asked for the portable parts.</summary>
    public static bool PortableForced { get; } = IsSet(Environment.GetEnvironmentVariable(PortableVariable));

    /// <summary>True when the Linux calls are to be used: on Linux, unless the portable parts are forced.</summary>
    public static bool IsNative { get; } = OperatingSystem.IsLinux() && !PortableForced;

    /// <summary>How this process is told apart in its start-up line.</summary>
    public static string Mode => IsNative ? "" : PortableForced ? " (portable, " + PortableVariable + "=1)" : " (portable)";

    /// <summary>What watches folders for changes: what the start-up line says.</summary>
    public static string Watching => IsNative ? "inotify watching" : "FileSystemWatcher watching";

    /// <summary>How the copies of served versions are made.</summary>
    public static string Copies => IsNative ? "FICLONE or copy_file_range copies" : "plain copies";

    /// <summary>Whether a lease asks the kernel if a writer still has a file open.</summary>
    public static string Leases => IsNative ? "leases for open writers" : "no leases";

    internal static bool IsSet(string? value)
        => value is not null && (value.Trim() == "1" || value.Trim().Equals("true", StringComparison.OrdinalIgnoreCase));
}
