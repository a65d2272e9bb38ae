using Peregrine.Compression;
using Peregrine.Indexing;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

/// <summary>
/// The native heap is trimmed once the compressor has stayed idle for <see cref="Compressor.TrimDelay"/>,
/// not each time its queue empties: under a writer that keeps changing files, a trim between two
/// batches only gave memory back for the next batch to take it again.
/// </summary>
public sealed class NativeTrimTests : IDisposable
{
    private readonly CompressionHarness _harness = new();

    [Fact]
    public async Task Trim_ComesOnceTheCompressorHasStayedIdle_NotWhenTheQueueEmpties()
    {
        _harness.Tree.Write("a.txt", CompressibleText("a"));
        using var compressor = await _harness.CompressAll(_harness.Index());

        // Idle now, but not for long yet.
        Assert.Equal(0, compressor.Trims);

        await WaitFor(() => compressor.Trims == 1, Compressor.TrimDelay * 10);
        await Task.Delay(Compressor.TrimDelay * 2);
        Assert.Equal(1, compressor.Trims);
    }

    [Fact]
    public async Task WorkThatComesBeforeTheDelayEnds_PutsTheTrimOff()
    {
        using var compressor = new Compressor(_harness.Options.Compression, new MemoryBudget(long.MaxValue), _harness.Logger);
        var started = DateTime.UtcNow;

        // A batch about every twentieth of the delay, for twice the delay: idle between batches,
        // never for the whole delay.
        for (var i = 0; DateTime.UtcNow - started < Compressor.TrimDelay * 2; i++)
        {
            _harness.Tree.Write($"f{i}.txt", CompressibleText(i.ToString(System.Globalization.CultureInfo.InvariantCulture)));
            var snapshot = _harness.Index();
            compressor.Enqueue(_harness.Find(snapshot, $"/f{i}.txt"));
            await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(0, compressor.Trims);
            await Task.Delay(Compressor.TrimDelay / 20);
        }

        Assert.Equal(0, compressor.Trims);
        await WaitFor(() => compressor.Trims == 1, Compressor.TrimDelay * 10);
    }

    public void Dispose() => _harness.Dispose();

    private static async Task WaitFor(Func<bool> condition, TimeSpan bound)
    {
        var deadline = DateTime.UtcNow + bound;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"not within {bound.TotalSeconds} s");
            await Task.Delay(50);
        }
    }
}
