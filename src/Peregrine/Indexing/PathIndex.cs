using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Peregrine.Indexing;

/// <summary>
/// The lookup table of a snapshot: request path to entry, built once, read by every request.
/// </summary>
/// <remarks>
/// <para>
/// Written here rather than using <c>FrozenDictionary</c> because its cost grew with the tree
/// (<c>dotnet run -c Release --project bench/Alloc -- lookup</c>; docs/performance.md, "The
/// path index"): for a large key set it hashes more of each key,
/// so the same hot paths cost more in a million-file tree than in a hundred-file one, and a
/// cold lookup walks four dependent arrays (buckets, hash codes, keys, then the key's
/// characters), each a cache miss once the table outgrows the CPU caches.
/// </para>
/// <para>
/// Here one array of slots, open addressing with linear probing, at most half full: a slot holds
/// the key, its entry and the key's hash, so a lookup reads one slot (its neighbours share the
/// cache line) and then the key's characters. The hash reads the whole path eight bytes at a time
/// with a per-process random seed; its cost depends on the path's length only, never on the
/// number of files.
/// </para>
/// <para>
/// The table is cut into shards by the hash's top bits, each its own small open-addressed table of
/// a few hundred keys, behind one array of shard references. A change to a few paths
/// (<see cref="With"/>) rebuilds only the shards they fall in and copies the array of references:
/// its cost follows the number of changed paths, not the size of the tree, and the old index stays
/// whole for the requests still reading it (docs/performance.md, "The path index").
/// </para>
/// <para>
/// Keys come from the tree, not from requests, so a request cannot lengthen a probe sequence. A
/// tree whose names were chosen to collide (an upload folder, say) could try: the hash's seed and
/// secret are random per process, and if any key still lands more than
/// <see cref="MaxProbeBeforeFallback"/> slots from its home, or a run of occupied slots is longer
/// than <see cref="MaxRunBeforeFallback"/>, that shard is rebuilt with the randomized Marvin hash
/// (<see cref="string.GetHashCode(ReadOnlySpan{char})"/>), as <c>Dictionary&lt;string, T&gt;</c>
/// switches to it after too many collisions.
/// </para>
/// </remarks>
internal sealed class PathIndex
{
    /// <summary>
    /// Longest probe distance accepted for the fast hash. Linear probing at half load gives
    /// distances of a few dozen at most for a million random keys; far more means collisions.
    /// </summary>
    internal const int MaxProbeBeforeFallback = 128;

    /// <summary>
    /// Longest run of occupied slots accepted for the fast hash: a miss walks to the end of its
    /// run. At half load random keys make runs of about a hundred at most for a million keys
    /// (the chance of a run of k falls about as e^-0.2k); names placed in consecutive home slots
    /// would make a long run with no key far from its home.
    /// </summary>
    internal const int MaxRunBeforeFallback = 1024;

    /// <summary>
    /// Keys per shard aimed for when the shards are laid out: small enough that rebuilding one
    /// is a few microseconds, large enough that the array of shards stays a small copy.
    /// </summary>
    internal const int KeysPerShard = 512;

    private readonly Shard[] _shards;
    private readonly int _shift;
    private readonly ulong _seed;
    private readonly ulong _secret;
    private readonly bool _marvin;

    private PathIndex(Shard[] shards, int count, ulong seed, ulong secret, bool marvin)
    {
        _shards = shards;
        _shift = 32 - BitOperations.Log2((uint)shards.Length);
        Count = count;
        _seed = seed;
        _secret = secret;
        _marvin = marvin;
    }

    /// <summary>Builds the index; keys are unique (they come from a dictionary).</summary>
    public static PathIndex Create(IReadOnlyCollection<KeyValuePair<string, CatalogEntry>> entries, bool marvin = false)
        => Create(entries, entries.Count, (ulong)Random.Shared.NextInt64() | 1, (ulong)Random.Shared.NextInt64() | 1, marvin);

    private static PathIndex Create(IEnumerable<KeyValuePair<string, CatalogEntry>> entries, int count, ulong seed, ulong secret, bool marvin)
    {
        var shardCount = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(1, count / KeysPerShard));
        var shift = 32 - BitOperations.Log2((uint)shardCount);
        var buckets = new List<KeyValuePair<string, CatalogEntry>>[shardCount];
        foreach (var pair in entries)
        {
            var shard = ShardOf(FastHash(pair.Key, seed, secret), shift);
            (buckets[shard] ??= []).Add(pair);
        }

        var shards = new Shard[shardCount];
        for (var i = 0; i < shardCount; i++)
        {
            shards[i] = Shard.Create(buckets[i] ?? [], seed, secret, marvin);
        }

        return new PathIndex(shards, count, seed, secret, marvin);
    }

    /// <summary>
    /// A new index holding this one's keys with <paramref name="changes"/> applied: a key with an
    /// entry is added or replaced, a key with <see langword="null"/> removed. Only the shards the
    /// changed keys fall in are rebuilt; the others are shared with this index, which is left
    /// as it was.
    /// </summary>
    public PathIndex With(IReadOnlyDictionary<string, CatalogEntry?> changes)
    {
        var count = Count;
        var touched = new Dictionary<int, Dictionary<string, CatalogEntry>>();
        foreach (var (key, entry) in changes)
        {
            var shard = ShardOf(FastHash(key, _seed, _secret), _shift);
            if (!touched.TryGetValue(shard, out var pairs))
            {
                touched[shard] = pairs = new Dictionary<string, CatalogEntry>(_shards[shard].Pairs(), StringComparer.Ordinal);
            }

            var had = pairs.Remove(key);
            if (entry is not null)
            {
                pairs[key] = entry;
            }

            count += (entry is null ? 0 : 1) - (had ? 1 : 0);
        }

        if (count > _shards.Length * KeysPerShard * 4)
        {
            // The tree outgrew its layout (a deploy into an empty root, one change at a time):
            // lay it out again once, so that shards stay small.
            var all = new Dictionary<string, CatalogEntry>(Pairs, StringComparer.Ordinal);
            foreach (var (key, entry) in changes)
            {
                if (entry is null)
                {
                    all.Remove(key);
                }
                else
                {
                    all[key] = entry;
                }
            }

            return Create(all, all.Count, _seed, _secret, _marvin);
        }

        var shards = (Shard[])_shards.Clone();
        foreach (var (index, pairs) in touched)
        {
            shards[index] = Shard.Create(pairs, _seed, _secret, _marvin);
        }

        return new PathIndex(shards, count, _seed, _secret, _marvin);
    }

    /// <summary>The longest run of occupied slots in any shard, counting a run that wraps around.</summary>
    internal int LongestRun() => _shards.Max(shard => shard.LongestRun());

    public int Count { get; }

    /// <summary>True when a shard fell back to Marvin hashing (see the remarks).</summary>
    public bool UsesMarvin => _shards.Any(shard => shard.Marvin);

    /// <summary>Every key and entry, shard by shard.</summary>
    public IEnumerable<KeyValuePair<string, CatalogEntry>> Pairs => _shards.SelectMany(shard => shard.Pairs());

    /// <summary>Finds a path's entry without allocating: the span is hashed and compared in place.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryFind(ReadOnlySpan<char> path, [System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out CatalogEntry entry)
    {
        var hash = FastHash(MemoryMarshal.AsBytes(path), _seed, _secret);
        return _shards[ShardOf(hash, _shift)].TryFind(path, hash, out entry);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static int ShardOf(uint hash, int shift) => (int)((ulong)hash >> shift);

    private static uint FastHash(string key, ulong seed, ulong secret) => FastHash(MemoryMarshal.AsBytes(key.AsSpan()), seed, secret);

    /// <summary>
    /// A multiply-fold hash (the construction of wyhash): 16 bytes per step, each folded through
    /// a 64×64→128-bit multiply. Its cost follows the path's length and nothing else
    /// (docs/performance.md, "The path index").
    /// </summary>
    private static uint FastHash(ReadOnlySpan<byte> bytes, ulong seed, ulong secret)
    {
        ref var start = ref MemoryMarshal.GetReference(bytes);
        var length = bytes.Length;
        var hash = seed ^ ((ulong)length * 0x9E3779B97F4A7C15UL);
        var offset = 0;
        for (; offset + 16 <= length; offset += 16)
        {
            var low = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, offset));
            var high = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, offset + 8));
            // Both operands carry a secret, so no block a file name can spell makes the product
            // zero and the hash independent of the seed (a constant here would let one).
            hash = Fold(low ^ hash ^ 0xA0761D6478BD642FUL, high ^ secret);
        }

        var rest = length - offset;
        if (rest > 8)
        {
            hash = Fold(Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, offset)) ^ hash, 0x8EBC6AF09C88C6E3UL);
        }

        if (rest > 0 && length >= 8)
        {
            // The last eight bytes, overlapping what came before: no byte-by-byte tail.
            hash = Fold(Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref start, length - 8)) ^ hash, 0x589965CC75374CC3UL);
        }
        else if (rest > 0)
        {
            // Keys of one to three characters.
            ulong tail = 0;
            for (var shift = 0; offset < length; offset++, shift += 8)
            {
                tail |= (ulong)Unsafe.Add(ref start, offset) << shift;
            }

            hash = Fold(tail ^ hash, 0x589965CC75374CC3UL);
        }

        return (uint)Fold(hash, 0x1D8E4E27C47D124FUL);
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong Fold(ulong a, ulong b)
    {
        var high = Math.BigMul(a, b, out var low);
        return high ^ low;
    }

    /// <summary>One shard: open addressing with linear probing, at most half full.</summary>
    private sealed class Shard
    {
        private readonly Slot[] _slots;
        private readonly int _mask;

        private Shard(int count, bool marvin)
        {
            var capacity = (int)BitOperations.RoundUpToPowerOf2((uint)Math.Max(8, count * 2));
            _mask = capacity - 1;
            _slots = new Slot[capacity];
            Marvin = marvin;
        }

        public bool Marvin { get; }

        public static Shard Create(ICollection<KeyValuePair<string, CatalogEntry>> pairs, ulong seed, ulong secret, bool marvin)
        {
            var shard = new Shard(pairs.Count, marvin);
            foreach (var (key, entry) in pairs)
            {
                var hash = marvin ? (uint)string.GetHashCode(key) : FastHash(key, seed, secret);
                if (!shard.Add(key, entry, hash) && !marvin)
                {
                    return Create(pairs, seed, secret, marvin: true);
                }
            }

            return marvin || shard.LongestRun() <= MaxRunBeforeFallback ? shard : Create(pairs, seed, secret, marvin: true);
        }

        /// <summary>Places a key; false when it landed too far from its home slot (see the remarks).</summary>
        private bool Add(string key, CatalogEntry entry, uint hash)
        {
            var index = (int)hash & _mask;
            var distance = 0;
            while (_slots[index].Key is not null)
            {
                index = (index + 1) & _mask;
                distance++;
            }

            _slots[index] = new Slot(key, entry, hash);
            return distance <= MaxProbeBeforeFallback;
        }

        public int LongestRun()
        {
            int longest = 0, run = 0, leading = -1;
            foreach (var slot in _slots)
            {
                if (slot.Key is null)
                {
                    leading = leading < 0 ? run : leading;
                    run = 0;
                    continue;
                }

                run++;
                longest = Math.Max(longest, run);
            }

            // The table is at most half full, so there is an empty slot and leading is set.
            return Math.Max(longest, run + Math.Max(leading, 0));
        }

        public IEnumerable<KeyValuePair<string, CatalogEntry>> Pairs()
        {
            foreach (var slot in _slots)
            {
                if (slot.Key is not null)
                {
                    yield return new(slot.Key, slot.Entry);
                }
            }
        }

        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        public bool TryFind(ReadOnlySpan<char> path, uint hash, [System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out CatalogEntry entry)
        {
            if (Marvin)
            {
                hash = (uint)string.GetHashCode(path);
            }

            var slots = _slots;
            var index = (int)hash & _mask;
            while (true)
            {
                ref readonly var slot = ref slots[index];
                if (slot.Key is null)
                {
                    entry = null;
                    return false;
                }

                if (slot.Hash == hash && path.SequenceEqual(slot.Key))
                {
                    entry = slot.Entry;
                    return true;
                }

                index = (index + 1) & _mask;
            }
        }
    }

    private readonly struct Slot(string key, CatalogEntry entry, uint hash)
    {
        public readonly string? Key = key;
        public readonly CatalogEntry Entry = entry;
        public readonly uint Hash = hash;
    }
}
