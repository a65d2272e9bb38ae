namespace Peregrine.Catalog;

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
    /// How long a file written without being closed (a hard link, a writer that keeps it open
    /// and stopped writing) must go without a change before it is published as it stands; and,
    /// for file systems watched without close events (polling, or no inotify), how long a changed
    /// file's modification time must lie in the past before a rescan takes it. Until then the
    /// previous version is served. Default: 500 ms.
    /// </summary>
    public TimeSpan SettleTime { get; set; } = TimeSpan.FromMilliseconds(500);

    /// <summary>
    /// A file kept open and written for longer than this (a log) is published as a snapshot
    /// that held still while it was read, and again at each such interval while the writing
    /// goes on. Default: 10 s.
    /// </summary>
    public TimeSpan OpenWriteLimit { get; set; } = TimeSpan.FromSeconds(10);
}
