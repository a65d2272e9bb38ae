using Peregrine.Catalog;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Catalog;

/// <summary>
/// A folder of one process's own under a shared parent: locked for its owner's life, made under a
/// staging name until locked, and removed by another process only once its lock is free.
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
        File.WriteAllBytes(Path.Combine(dead, ".lock"), []);
        File.WriteAllBytes(Path.Combine(dead, "1"), [1, 2, 3]);

        using var folder = InstanceFolder.Create(parent.Root, Prefix);

        Assert.False(Directory.Exists(dead));
        Assert.Equal([folder.Path], Directory.GetDirectories(parent.Root));
    }

    [Fact]
    public void StagingFolder_IsLeftWhileYoung_AndRemovedOnceOld()
    {
        using var parent = new TempTree();
        var young = Directory.CreateDirectory(Path.Combine(parent.Root, ".staging-" + Prefix + "1-young")).FullName;
        var old = Directory.CreateDirectory(Path.Combine(parent.Root, ".staging-" + Prefix + "2-old")).FullName;
        Directory.SetLastWriteTimeUtc(old, DateTime.UtcNow - InstanceFolder.StagingAge - TimeSpan.FromMinutes(1));

        InstanceFolder.RemoveAbandoned(parent.Root, Prefix);

        Assert.True(Directory.Exists(young), "a folder another process may still be making was removed");
        Assert.False(Directory.Exists(old), "a staging folder left by a process that died while making it was kept");
    }
}
