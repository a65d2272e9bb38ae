using System.Buffers;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Server.Connections;

/// <summary>
/// The memory of TLS and h2c connections: pinned blocks of <see cref="BlockSize"/> bytes where
/// Kestrel's own pool has 4 KiB ones. Every pipe of a connection takes its memory from its
/// transport's pool: the socket's, TLS's decrypted input, and over HTTP/2 each stream's response
/// pipe. With 4 KiB blocks a 31 KB response body filled eight blocks, each rented, walked and
/// returned on its own by the body's copy, by HTTP/2's frame writer and by the socket's send;
/// with these it is one block (docs/performance.md, "TLS output in 32 KiB
/// writes").
/// </summary>
/// <remarks>
/// An idle connection holds no block: Kestrel waits for data with a zero-byte read before it
/// rents one. At most <see cref="MaxRetained"/> free blocks are kept; a block returned beyond
/// that is left to the GC, so a burst of connections costs memory only while it lasts. The free
/// blocks are a stack: the block rented is the one given back last, still in the CPU's cache from
/// the copy that just read it, where a queue (Kestrel's pool is one) hands out the block given
/// back longest ago, out of the cache under a load that cycles many (docs/performance.md, "TLS
/// output in 32 KiB writes"). The blocks
/// are pinned arrays, in the GC's pinned-object heap, which is never compacted: a few blocks kept
/// free hold whole regions of it resident after a load. So when the server goes quiet after one,
/// <see cref="TrimAll"/> lets every pool's free blocks go before the collection (QuietHeap), and
/// the next load rents new ones (docs/performance.md, "Memory after a load").
/// </remarks>
internal sealed class LargeBlockMemoryPool : MemoryPool<byte>
{
    /// <summary>A body up to 32 KiB in one block; a TLS record of 16 KiB in at most two.</summary>
    internal const int BlockSize = 32 * 1024;

    /// <summary>Free blocks kept for reuse: 8 MiB.</summary>
    internal const int MaxRetained = 256;

    // Every pool not yet disposed or collected, for TrimAll: one a listener. Weak, so a pool no
    // listener uses any more (a host built again, in tests) is not kept alive with its blocks.
    private static readonly ConditionalWeakTable<LargeBlockMemoryPool, object> s_pools = new();
    private static readonly object s_listed = new();

    // The free blocks, the last given back on top; guarded by _lock.
    private readonly Block?[] _free = new Block?[MaxRetained];
    private readonly Lock _lock = new();
    private int _freeCount;

    public LargeBlockMemoryPool() => s_pools.TryAdd(this, s_listed);

    public override int MaxBufferSize => BlockSize;

    /// <summary>Free blocks held now.</summary>
    internal int Retained => Volatile.Read(ref _freeCount);

    public override IMemoryOwner<byte> Rent(int minBufferSize = -1)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThan(minBufferSize, BlockSize);
        Block? block = null;
        lock (_lock)
        {
            if (_freeCount > 0)
            {
                var top = --_freeCount;
                block = _free[top];
                _free[top] = null;
            }
        }

        if (block is null)
        {
            return new Block(this);
        }

        block.Rented = true;
        return block;
    }

    private void Return(Block block)
    {
        lock (_lock)
        {
            if (_freeCount < MaxRetained)
            {
                _free[_freeCount++] = block;
            }
        }
    }

    protected override void Dispose(bool disposing)
    {
        s_pools.Remove(this);
        Trim();
    }

    /// <summary>Lets the free blocks go to the GC; blocks rented now come back as usual.</summary>
    internal void Trim()
    {
        lock (_lock)
        {
            Array.Clear(_free, 0, _freeCount);
            _freeCount = 0;
        }
    }

    /// <summary>Lets every pool's free blocks go to the GC.</summary>
    internal static void TrimAll()
    {
        foreach (var (pool, _) in (IEnumerable<KeyValuePair<LargeBlockMemoryPool, object>>)s_pools)
        {
            pool.Trim();
        }
    }

    private sealed class Block(LargeBlockMemoryPool pool) : IMemoryOwner<byte>
    {
        private readonly byte[] _array = GC.AllocateUninitializedArray<byte>(BlockSize, pinned: true);

        public bool Rented { get; set; } = true;

        public Memory<byte> Memory => _array;

        /// <summary>Gives the block back; a second dispose of one rental is ignored, not a second return.</summary>
        public void Dispose()
        {
            if (Rented)
            {
                Rented = false;
                pool.Return(this);
            }
        }
    }

    /// <summary>Hands every connection of a listener the one pool.</summary>
    internal sealed class Factory : IMemoryPoolFactory<byte>
    {
        private readonly LargeBlockMemoryPool _pool = new();

        public MemoryPool<byte> Create(MemoryPoolOptions? options = null) => _pool;
    }
}
