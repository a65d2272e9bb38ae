using Peregrine.Server.Hosting;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// The server's collection after a load: it comes at the first quiet interval after enough
/// allocation, never while the process keeps allocating, and once per load.
/// </summary>
public sealed class QuietHeapTests
{
    private const long Mib = 1024 * 1024;

    private long _allocated = 100 * Mib;
    private int _collections;

    private QuietHeap Create() => QuietHeap.ForTest(() => _allocated, () => _collections++);

    [Fact]
    public void Collects_AtTheFirstQuietIntervalAfterALoad_AndOnceForIt()
    {
        var quiet = Create();

        // Under load: 20 MiB an interval, 60 MiB in all.
        for (var i = 0; i < 3; i++)
        {
            _allocated += 20 * Mib;
            Assert.False(quiet.Tick());
        }

        Assert.Equal(0, _collections);

        // The load stops: a little allocation (timers, an idle connection) is still quiet.
        _allocated += QuietHeap.QuietBytes / 2;
        Assert.True(quiet.Tick());
        Assert.Equal(1, _collections);
        Assert.Equal(1, quiet.Collections);

        // Idle from then on: nothing new to collect.
        for (var i = 0; i < 5; i++)
        {
            _allocated += QuietHeap.QuietBytes / 2;
            Assert.False(quiet.Tick());
        }

        Assert.Equal(1, _collections);
    }

    [Fact]
    public void LeavesASteadyLoadToTheGC()
    {
        var quiet = Create();
        for (var i = 0; i < 100; i++)
        {
            _allocated += QuietHeap.QuietBytes + 1;
            Assert.False(quiet.Tick());
        }

        Assert.Equal(0, _collections);
    }

    [Fact]
    public void DoesNothing_AfterLessAllocationThanACollectionIsWorth()
    {
        var quiet = Create();
        _allocated += QuietHeap.MinAllocatedBytes - 1;
        Assert.False(quiet.Tick());
        Assert.False(quiet.Tick());
        Assert.Equal(0, _collections);

        // Another burst brings the total over the bound; the quiet interval after it collects.
        _allocated += 2 * Mib;
        Assert.False(quiet.Tick());
        Assert.True(quiet.Tick());
        Assert.Equal(1, _collections);
    }
}
