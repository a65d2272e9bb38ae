using Peregrine.Sources;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources;

/// <summary>
/// A folder of one process's own under a shared parent: locked for its owner's life, made under a
/// staging name until locked, and removed by another process only once its lock is free, however
/// old it looks and whatever is in it.
/// </summary>
public sealed class InstanceFolderTests
{
    private const string Prefix = "peregrine-test-";

    [Fact]
    public void Folder_IsLockedForItsLife_AndGoesWithIt()
    {
        using var parent = new TempTree();
        string path;
        using (var folder = InstanceFolder.Create(parent.Root, Prefix))
        {
            path = folder.Path;
            Assert.True(folder.IsLocked);
            Assert.StartsWith(Path.Combine(parent.Root, Prefix), path, StringComparison.Ordinal);

            // Another process's start-up finds it locked and leaves it.
            InstanceFolder.RemoveAbandoned(parent.Root, Prefix);
            Assert.True(Directory.Exists(path));
            Assert.Empty(Directory.GetDirectories(parent.Root, ".staging-*"));
        }

        Assert.False(Directory.Exists(path));
    }

    [Fact]
    public void FolderWhoseLockIsFree_IsRemoved_ByTheNextFolderMade()
    {
        using var parent = new TempTree();
        var dead = Directory.CreateDirectory(Path.Combine(parent.Root, Prefix + "1-dead")).FullName;
        File.WriteAllBytes(Path.Combine(dead, "1"), [1, 2, 3]);
        var deadStaging = Directory.CreateDirectory(Path.Combine(parent.Root, ".staging-" + Prefix + "2-dead")).FullName;

        using var folder = InstanceFolder.Create(parent.Root, Prefix);

        Assert.False(Directory.Exists(dead));
        Assert.False(Directory.Exists(deadStaging));
        Assert.Equal([folder.Path], Directory.GetDirectories(parent.Root));
    }

    [Fact]
    public void LockedFolder_IsKept_HoweverOldAndWhateverItHolds()
    {
        using var parent = new TempTree();
        using var owner = InstanceFolder.Create(parent.Root, Prefix);
        var staging = Directory.CreateDirectory(Path.Combine(parent.Root, ".staging-" + Prefix + "1-making")).FullName;
        using var stagingLock = FolderLock.Take(staging);
        var longAgo = DateTime.UtcNow - TimeSpan.FromDays(30);
        Directory.SetLastWriteTimeUtc(owner.Path, longAgo);
        Directory.SetLastWriteTimeUtc(staging, longAgo);

        InstanceFolder.RemoveAbandoned(parent.Root, Prefix);

        Assert.True(Directory.Exists(owner.Path), "a live process's folder was removed");
        Assert.True(Directory.Exists(staging), "a folder another process is still making was removed");
    }

    [Fact]
    public void FolderThatCannotBeLocked_IsRemoved_AndTheFailureSaid()
    {
        // As on arm64 when O_DIRECTORY had x86-64's value (O_DIRECT there): open(2) of the new
        // folder refused. Each attempt's staging folder must go with it.
        using var parent = new TempTree();
        var attempts = 0;

        var failure = Assert.Throws<IOException>(() => InstanceFolder.Create(parent.Root, Prefix, InstanceFolder.NewName(Prefix), (string folder, out bool lockable) =>
        {
            attempts++;
            Assert.True(Directory.Exists(folder), "the lock was asked for before the folder was made");
            lockable = false;
            throw new IOException($"Cannot open '{folder}' (errno 22).");
        }));

        Assert.Contains("errno 22", failure.Message, StringComparison.Ordinal);
        Assert.Equal(3, attempts);
        Assert.Empty(Directory.GetFileSystemEntries(parent.Root));
    }

    [Fact]
    public void FolderMadeUnderAGivenName_HasThatName()
    {
        using var parent = new TempTree();
        var name = InstanceFolder.NewName(Prefix);

        using var folder = InstanceFolder.Create(parent.Root, Prefix, name);

        Assert.Equal(Path.Combine(parent.Root, name), folder.Path);
        Assert.Equal([folder.Path], Directory.GetDirectories(parent.Root));
    }
}
