namespace Peregrine;

/// <summary>How Peregrine notices that files under the root changed.</summary>
public sealed class WatchOptions
{
    /// <summary>
    /// Watch the root and keep the index current. Default: <see langword="true"/>. Turn it
    /// off for immutable deployments: the index is then built once and never rebuilt.
    /// </summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// Also rescan the whole tree at this interval, for file systems that send no change
    /// events (NFS, SMB and other network mounts, some container volumes). Default: none
    /// (events only). A rescan reads metadata only; unchanged files are not read again.
    /// </summary>
    public TimeSpan? PollingInterval { get; set; }

    /// <summary>
    /// How long to wait after a change event for more events before rebuilding, so that a
    /// burst (a deploy copying thousands of files) costs one rebuild. Default: 100 ms. The
    /// longest a change can take to appear is this delay plus the rebuild time.
    /// </summary>
    public TimeSpan CoalescingDelay { get; set; } = TimeSpan.FromMilliseconds(100);

    /// <summary>
    /// How often to check whether the root itself was replaced: a symbolic link re-pointed
    /// (<c>current -> releases/43</c>) or a folder renamed into its place. Default: 500 ms.
    /// </summary>
    public TimeSpan RootCheckInterval { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// How long a file written without being closed, and not open any more, must go without a
    /// change before it is published as it stands (a hard link written under another name, a
    /// writer whose open came before the watch; a file still open waits for its close or for
    /// <see cref="OpenWriteLimit"/>, so a writer that truncates it and pauses does not publish it
    /// empty); and,
    /// for file systems watched without close events (polling, or no inotify), how long a changed
    /// file's modification time must lie in the past before a rescan takes it. Until then the
    /// previous version is served. Default: 500 ms.
    /// </summary>
    public TimeSpan SettleTime { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// A file kept open and written for longer than this (a log, or a writer that keeps the file
    /// open and stopped writing) is published as a snapshot that held still while it was read,
    /// and again at each such interval while the writing goes on. Default: 10 s.
    /// </summary>
    public TimeSpan OpenWriteLimit { get; set; } = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Files streamed from disk (above <see cref="PeregrineOptions.MaxCachedFileSize"/>) up to this
    /// size are copied when each version is published, and served from the copy: a writer that
    /// rewrites the file in place (<c>cp</c> onto it, a truncate and rewrite) cannot touch the bytes
    /// being sent, and the previous version is served whole until the new one is closed and
    /// published. Larger files are read from the original: while one is rewritten in place it is
    /// answered with 503 and <c>Retry-After</c>, and a response under way is cut short rather than
    /// finished with bytes of two versions. A copy is a reflink where the file system shares
    /// blocks (btrfs, XFS) and a full copy elsewhere (ext4), made at index time, so it costs that
    /// much disk space and indexing time. 0 turns copying off. Only while <see cref="Enabled"/>.
    /// Default: 64 MiB.
    /// </summary>
    public long MaxCopiedFileSize { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// The most bytes all copies together may take on disk (see <see cref="MaxCopiedFileSize"/>);
    /// a file that does not fit is read from the original. A replaced version's copy counts until
    /// it is removed, a second after. 0 turns copying off. Default: 1 GiB.
    /// </summary>
    public long CopyBudget { get; set; } = 1024L * 1024 * 1024;

    /// <summary>
    /// The folder under which the copies are kept, in a folder of the server's own that is removed
    /// when it stops (and, after a crash, when the next server starts there). Best on the root's
    /// file system, where a reflink makes a copy free; mind that a temporary folder in memory
    /// (tmpfs) holds the copies in memory. Default: the system's temporary folder.
    /// </summary>
    public string? CopyDirectory { get; set; }
}
