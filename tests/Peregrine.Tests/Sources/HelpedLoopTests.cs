using Peregrine.Sources;

namespace Peregrine.Tests.Sources;

/// <summary>The publisher's parallel loop: every item once, and failures and cancellation as a loop in turn would give them.</summary>
public sealed class HelpedLoopTests
{
    [Theory]
    [InlineData(0)]
    [InlineData(1)]
    [InlineData(2)]
    [InlineData(10_000)]
    public void EveryItem_RunsExactlyOnce(int count)
    {
        var runs = new int[count];
        HelpedLoop.For(count, i => Interlocked.Increment(ref runs[i]), CancellationToken.None);

        Assert.All(runs, run => Assert.Equal(1, run));
    }

    [Fact]
    public void ABodysException_IsRethrownAsItIs_OnceEveryItemBegunHasEnded()
    {
        var begun = 0;
        var ended = 0;
        var thrown = Assert.Throws<IOException>(() => HelpedLoop.For(
            64,
            i =>
            {
                Interlocked.Increment(ref begun);
                Thread.Sleep(i == 0 ? 0 : 20);
                Interlocked.Increment(ref ended);
                if (i == 0)
                {
                    throw new IOException("item 0");
                }
            },
            CancellationToken.None));

        Assert.Equal("item 0", thrown.Message);
        Assert.Equal(Volatile.Read(ref begun), Volatile.Read(ref ended));
        Assert.True(begun < 64, $"all {begun} items ran after the first failed");
    }

    [Fact]
    public void ACancelledToken_StopsTheItemsNotYetBegun()
    {
        using var cancellation = new CancellationTokenSource();
        var begun = 0;
        Assert.ThrowsAny<OperationCanceledException>(() => HelpedLoop.For(
            64,
            i =>
            {
                if (Interlocked.Increment(ref begun) == 2)
                {
                    cancellation.Cancel();
                }

                Thread.Sleep(10);
            },
            cancellation.Token));

        Assert.True(begun < 64, $"all {begun} items ran after the cancellation");
    }
}
