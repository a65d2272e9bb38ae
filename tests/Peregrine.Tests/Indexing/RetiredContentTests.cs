using Peregrine.Indexing;

namespace Peregrine.Tests.Indexing;

/// <summary>
/// Content the index gives back is counted, and a background full collection is asked for once
/// enough of it adds up, at most once per <see cref="RetiredContent.MinInterval"/>.
/// </summary>
public sealed class RetiredContentTests
{
    [Fact]
    public void LessThanTheThreshold_AsksForNothing()
    {
        var budget = new MemoryBudget(long.MaxValue);
        Assert.True(budget.TryReserve(RetiredContent.MinBytes));
        budget.Release(RetiredContent.MinBytes - 1);

        Assert.Equal(0, budget.Retired.Requests);
    }

    [Fact]
    public async Task EnoughGivenBack_AsksOnce_ThenNotAgainWithinTheInterval()
    {
        var retired = new RetiredContent();

        // Not before the interval has passed since the start either: a first index that drops
        // its own false starts is not followed by a collection at once.
        retired.Add(RetiredContent.MinBytes);
        Assert.Equal(0, retired.Requests);

        await Task.Delay(RetiredContent.MinInterval + TimeSpan.FromMilliseconds(200));
        var before = GC.CollectionCount(GC.MaxGeneration);
        retired.Add(1);
        Assert.Equal(1, retired.Requests);

        retired.Add(RetiredContent.MinBytes * 10);
        Assert.Equal(1, retired.Requests);

        // The collection itself runs off the caller's thread, beside it.
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (GC.CollectionCount(GC.MaxGeneration) == before)
        {
            Assert.True(DateTime.UtcNow < deadline, "no full collection within 30 s of the request");
            await Task.Delay(20);
        }
    }
}
