using System.Diagnostics;
using System.Runtime.Versioning;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Safety;

[UnsupportedOSPlatform("windows")]
public sealed class SpecialFileTests
{
    // .NET tells no FIFO from a file (FileSystemInfo has no file type), and opening one to find
    // out blocks: only stat(2) can, and its layout is read on Linux only.
    [NativeFact("stat(2) to tell a FIFO from a file without opening it")]
    public async Task Fifo_InRoot_IsSkippedWithoutHangingTheIndex()
    {
        // Opening a FIFO for reading blocks until a writer appears: indexing one would hang.
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        using (var mkfifo = Process.Start("mkfifo", Path.Combine(tree.Root, "pipe.txt")))
        {
            await mkfifo.WaitForExitAsync();
            Assert.Equal(0, mkfifo.ExitCode);
        }

        var start = PeregrineHost.StartAsync(tree.Root);
        var finished = await Task.WhenAny(start, Task.Delay(TimeSpan.FromSeconds(30)));
        Assert.Same(start, finished);
        await using var host = await start;

        using var pipe = await host.Client.GetAsync("/pipe.txt");
        using var index = await host.Client.GetAsync("/index.html");
        Assert.Equal(404, (int)pipe.StatusCode);
        Assert.Equal(200, (int)index.StatusCode);
    }

    [Fact]
    public async Task DanglingLink_IsSkippedAndTheRestIsServed()
    {
        using var tree = new TempTree();
        tree.Write("ok.txt", "fine");
        File.CreateSymbolicLink(Path.Combine(tree.Root, "dangling.txt"), Path.Combine(tree.Root, "nowhere.txt"));

        await using var host = await PeregrineHost.StartAsync(tree.Root);
        using var ok = await host.Client.GetAsync("/ok.txt");
        using var dangling = await host.Client.GetAsync("/dangling.txt");

        Assert.Equal(200, (int)ok.StatusCode);
        Assert.Equal(404, (int)dangling.StatusCode);
    }
}
