using System.Buffers;
using System.Collections.Concurrent;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Tests.Server.Connections.Tls;

public sealed class LargeBlockMemoryPoolTests
{
    [Theory]
    [InlineData(-1)]
    [InlineData(0)]
    [InlineData(4096)]
    [InlineData(LargeBlockMemoryPool.BlockSize)]
    public void Rent_GivesAWholeBlock(int size)
    {
        using var pool = new LargeBlockMemoryPool();

        using var block = pool.Rent(size);

        Assert.Equal(LargeBlockMemoryPool.BlockSize, block.Memory.Length);
        Assert.Equal(LargeBlockMemoryPool.BlockSize, pool.MaxBufferSize);
    }

    [Fact]
    public void RentAboveTheBlockSize_Throws()
    {
        using var pool = new LargeBlockMemoryPool();

        Assert.Throws<ArgumentOutOfRangeException>(() => pool.Rent(LargeBlockMemoryPool.BlockSize + 1));
    }

    [Fact]
    public void ReturnedBlock_IsRentedAgain()
    {
        using var pool = new LargeBlockMemoryPool();
        var first = pool.Rent();
        first.Memory.Span[0] = 42;
        first.Dispose();

        using var second = pool.Rent();

        Assert.Same(first, second);
        Assert.Equal(0, pool.Retained);
    }

    [Fact]
    public void FreeBlocks_AreRentedLastReturnedFirst()
    {
        using var pool = new LargeBlockMemoryPool();
        var first = pool.Rent();
        var second = pool.Rent();
        var third = pool.Rent();
        first.Dispose();
        second.Dispose();
        third.Dispose();

        using var a = pool.Rent();
        using var b = pool.Rent();
        using var c = pool.Rent();

        Assert.Same(third, a);
        Assert.Same(second, b);
        Assert.Same(first, c);
        Assert.Equal(0, pool.Retained);
    }

    [Fact]
    public void ConcurrentRentsAndReturns_NeverHandOneBlockToTwoRenters()
    {
        using var pool = new LargeBlockMemoryPool();
        var held = new ConcurrentDictionary<IMemoryOwner<byte>, bool>(ReferenceEqualityComparer.Instance);
        var failures = 0;

        Parallel.For(0, 4, _ =>
        {
            for (var i = 0; i < 20_000; i++)
            {
                var block = pool.Rent();
                if (!held.TryAdd(block, true))
                {
                    Interlocked.Increment(ref failures);
                }

                held.TryRemove(block, out var _);
                block.Dispose();
            }
        });

        Assert.Equal(0, failures);
        Assert.InRange(pool.Retained, 1, LargeBlockMemoryPool.MaxRetained);
    }

    [Fact]
    public void BlockDisposedTwice_IsReturnedOnce()
    {
        using var pool = new LargeBlockMemoryPool();
        var block = pool.Rent();

        block.Dispose();
        block.Dispose();
        using var a = pool.Rent();
        using var b = pool.Rent();

        Assert.Equal(0, pool.Retained);
        Assert.NotSame(a, b);
    }

    [Fact]
    public void BlocksBeyondTheRetainedMost_AreLeftToTheCollector()
    {
        using var pool = new LargeBlockMemoryPool();
        var blocks = Enumerable.Range(0, LargeBlockMemoryPool.MaxRetained + 10).Select(_ => pool.Rent()).ToList();

        foreach (var block in blocks)
        {
            block.Dispose();
        }

        Assert.Equal(LargeBlockMemoryPool.MaxRetained, pool.Retained);
    }

    [Fact]
    public void TrimAll_LetsEveryPoolsFreeBlocksGo_AndNewOnesAreRentedAfter()
    {
        using var a = new LargeBlockMemoryPool();
        using var b = new LargeBlockMemoryPool();
        var fromA = a.Rent();
        fromA.Dispose();
        var fromB = Enumerable.Range(0, 3).Select(_ => b.Rent()).ToList();
        fromB.ForEach(block => block.Dispose());
        Assert.Equal(1, a.Retained);
        Assert.Equal(3, b.Retained);

        LargeBlockMemoryPool.TrimAll();

        Assert.Equal(0, a.Retained);
        Assert.Equal(0, b.Retained);
        using var again = a.Rent();
        Assert.NotSame(fromA, again);
    }

    [Fact]
    public void BlockRentedDuringATrim_ComesBackAsUsual()
    {
        using var pool = new LargeBlockMemoryPool();
        var block = pool.Rent();

        LargeBlockMemoryPool.TrimAll();
        block.Dispose();

        Assert.Equal(1, pool.Retained);
        using var again = pool.Rent();
        Assert.Same(block, again);
    }
}
