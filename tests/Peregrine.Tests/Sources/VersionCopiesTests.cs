using System.Diagnostics;
using System.Net;
using Peregrine.Tests.Infrastructure;
using Peregrine.Validation;

namespace Peregrine.Tests.Sources;

/// <summary>
/// The copies that files streamed from disk are served from: one per published version, in a
/// folder of the server's own, removed with their version and with the server; a folder left by a
/// server that died is removed by the next one, one still locked by a running server is not.
/// </summary>
public sealed class VersionCopiesTests
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(10);

    [Fact]
    public async Task Copies_FollowThePublishedVersions_AndGoWithTheServer()
    {
        using var tree = new TempTree();
        using var parent = new TempTree();
        var a2 = Bytes(250_000, seed: 3);
        tree.Write("a.bin", Bytes(200_000, seed: 1));
        tree.Write("b.bin", Bytes(300_000, seed: 2));
        tree.Write("small.txt", "held in memory, never copied");
        var host = await PeregrineHost.StartAsync(tree.Root, options => (options.MaxCachedFileSize, options.Watch.CopyDirectory) = (1000, parent.Root));
        try
        {
            var folder = Assert.Single(Directory.GetDirectories(parent.Root));
            Assert.Equal(2, Copies(folder).Length);

            // Rewritten in place: the new version gets a copy, the old one's goes a moment later.
            tree.Write("a.bin", a2);
            await UntilAsync(async () => (await host.Client.GetByteArrayAsync("/a.bin")).AsSpan().SequenceEqual(a2), () => "the new version of a.bin is served");
            await UntilAsync(() => Task.FromResult(Copies(folder).Length == 2), () => $"the replaced version's copy is removed ({Describe(folder)})");
            Assert.Contains(Copies(folder), copy => File.ReadAllBytes(copy).AsSpan().SequenceEqual(a2));

            File.Delete(Path.Combine(tree.Root, "b.bin"));
            await UntilAsync(async () => (await host.Client.GetAsync("/b.bin")).StatusCode == HttpStatusCode.NotFound, () => "b.bin answers 404");
            await UntilAsync(() => Task.FromResult(Copies(folder).Length == 1), () => $"the deleted file's copy is removed ({Describe(folder)})");
        }
        finally
        {
            await host.DisposeAsync();
        }

        Assert.Empty(Directory.GetDirectories(parent.Root));
    }

    [Fact]
    public async Task FolderOfADeadServer_IsRemovedAtStart_OneStillLocked_IsKept()
    {
        using var tree = new TempTree();
        using var parent = new TempTree();
        tree.Write("big.bin", Bytes(100_000, seed: 1));
        var dead = Directory.CreateDirectory(Path.Combine(parent.Root, "peregrine-copies-1-dead")).FullName;
        File.WriteAllBytes(Path.Combine(dead, "1"), Bytes(100_000, seed: 2));
        var live = Directory.CreateDirectory(Path.Combine(parent.Root, "peregrine-copies-2-live")).FullName;
        using var liveLock = FolderLock.Take(live);

        await using (var host = await PeregrineHost.StartAsync(tree.Root, options => (options.MaxCachedFileSize, options.Watch.CopyDirectory) = (1000, parent.Root)))
        {
            Assert.False(Directory.Exists(dead), "the folder of a server that is gone was left");
            Assert.True(Directory.Exists(live), "the folder of a running server was removed");
            Assert.Equal(2, Directory.GetDirectories(parent.Root).Length);
        }

        Assert.Equal([live], Directory.GetDirectories(parent.Root));
    }

    [Fact]
    public async Task WithCopyingOff_NoFolderIsMade()
    {
        using var tree = new TempTree();
        using var parent = new TempTree();
        tree.Write("big.bin", Bytes(100_000, seed: 1));

        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.MaxCachedFileSize, options.Watch.CopyDirectory, options.Watch.MaxCopiedFileSize) = (1000, parent.Root, 0));

        Assert.Equal(100_000, (await host.Client.GetByteArrayAsync("/big.bin")).Length);
        Assert.Empty(Directory.GetDirectories(parent.Root));
    }

    [Theory]
    [InlineData("MaxCopiedFileSize")]
    [InlineData("CopyBudget")]
    [InlineData("CopyDirectory")]
    public void BadCopyOption_IsReportedUnderItsName(string option)
    {
        using var tree = new TempTree();
        var file = tree.Write("not-a-folder", "x");
        var options = new PeregrineOptions { Root = tree.Root };
        switch (option)
        {
            case "MaxCopiedFileSize":
                options.Watch.MaxCopiedFileSize = -1;
                break;
            case "CopyBudget":
                options.Watch.CopyBudget = -1;
                break;
            default:
                options.Watch.CopyDirectory = file;
                break;
        }

        var error = Assert.Single(PeregrineOptionsValidator.Collect(options));
        Assert.StartsWith($"Watch.{option}: ", error, StringComparison.Ordinal);
    }

    private static string Describe(string folder)
        => string.Join(", ", Copies(folder).Select(copy => new FileInfo(copy) is { Exists: true } info ? $"{Path.GetFileName(copy)}: {info.Length} bytes" : $"{Path.GetFileName(copy)}: gone"));

    private static string[] Copies(string folder) => Directory.GetFiles(folder);

    private static async Task UntilAsync(Func<Task<bool>> condition, Func<string> what)
    {
        var clock = Stopwatch.StartNew();
        while (!await condition())
        {
            // The description only on failure: read while the server removes copies, it would
            // race with the removal it waits for.
            if (clock.Elapsed >= s_limit)
            {
                Assert.Fail($"not within {s_limit}: {what()}");
            }
            await Task.Delay(20);
        }
    }

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
