using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Server.Hosting;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Live;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// The server's one collection after start-up: it waits for the first index and for the
/// compressor to stay idle, and does nothing when the server stops first or the index failed.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class SettledHeapTests : IDisposable
{
    private readonly TempTree _tree = new();

    [Fact]
    public async Task Collects_OnceTheFirstIndexIsPublishedAndTheCompressorHasStayedIdle()
    {
        _tree.Write("index.html", string.Concat(Enumerable.Repeat("<p>settled</p>\n", 4_000)));
        using var catalog = new FileCatalog(new PeregrineOptions { Root = _tree.Root }, NullLoggerFactory.Instance);
        using var compressor = Compressor.Follow(catalog, NullLoggerFactory.Instance);
        var collections = 0;

        // The test host's heap is far larger than a server's: no limit here (see the next test).
        var settled = SettledHeap.CollectOnceSettledAsync(catalog, compressor, long.MaxValue, () => collections++, CancellationToken.None);

        // No index yet: nothing to settle on.
        await Task.Delay(SettledHeap.Delay * 2);
        Assert.False(settled.IsCompleted);

        catalog.Start();
        Assert.True(await settled.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.True(catalog.Ready.IsCompletedSuccessfully);
        Assert.True(compressor.WhenIdle().IsCompleted);
        Assert.True(catalog.Current!.TryFind("/index.html", out var entry));
        Assert.NotNull(entry.Encoded);
        Assert.Equal(1, collections);
    }

    [Fact]
    public async Task DoesNothing_WhenTheHeapIsAboveTheLimit()
    {
        _tree.Write("index.html", "home");
        using var catalog = new FileCatalog(new PeregrineOptions { Root = _tree.Root }, NullLoggerFactory.Instance);
        using var compressor = Compressor.Follow(catalog, NullLoggerFactory.Instance);

        var collections = 0;

        var settled = SettledHeap.CollectOnceSettledAsync(catalog, compressor, maxHeapBytes: 0, () => collections++, CancellationToken.None);
        catalog.Start();

        Assert.False(await settled.WaitAsync(TimeSpan.FromSeconds(60)));
        Assert.Equal(0, collections);
        Assert.True(catalog.Ready.IsCompletedSuccessfully);
        Assert.True(compressor.WhenIdle().IsCompleted);
    }

    [Fact]
    public async Task DoesNothing_WhenTheServerStopsFirst()
    {
        _tree.Write("index.html", "home");
        using var catalog = new FileCatalog(new PeregrineOptions { Root = _tree.Root }, NullLoggerFactory.Instance);
        using var compressor = Compressor.Follow(catalog, NullLoggerFactory.Instance);
        using var stopping = new CancellationTokenSource();

        var collections = 0;

        var settled = SettledHeap.CollectOnceSettledAsync(catalog, compressor, long.MaxValue, () => collections++, stopping.Token);
        stopping.Cancel();

        Assert.False(await settled.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(0, collections);
    }

    [Fact]
    public async Task DoesNothing_WhenTheFirstIndexFailed()
    {
        var root = Path.GetDirectoryName(_tree.Write("gone/index.html", "x"))!;
        var options = new PeregrineOptions { Root = root };
        options.Watch.Enabled = false;
        using var catalog = new FileCatalog(options, NullLoggerFactory.Instance);
        using var compressor = Compressor.Follow(catalog, NullLoggerFactory.Instance);
        Directory.Delete(root, recursive: true);

        var collections = 0;

        var settled = SettledHeap.CollectOnceSettledAsync(catalog, compressor, long.MaxValue, () => collections++, CancellationToken.None);
        catalog.Start();

        await Assert.ThrowsAnyAsync<Exception>(() => catalog.Ready);
        Assert.False(await settled.WaitAsync(TimeSpan.FromSeconds(10)));
        Assert.Equal(0, collections);
    }

    public void Dispose() => _tree.Dispose();
}
