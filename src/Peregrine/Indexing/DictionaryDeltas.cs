namespace Peregrine.Indexing;

/// <summary>
/// The dictionary-encoded representations of one file (RFC 9842 §4: dcz, and dcb where it can
/// be made), one per earlier version it was encoded against and coding, each found by that
/// version's SHA-256 as a browser names it in <c>Available-Dictionary</c>. Made once and published on the entry with one reference write,
/// like <see cref="EncodedVariants"/>; a new set replaces the old one whole.
/// </summary>
internal sealed class DictionaryDeltas
{
    private readonly ulong[] _keys;
    private readonly byte[][] _hashes;
    private readonly Representation[] _deltas;

    public DictionaryDeltas(IReadOnlyList<(byte[] DictionaryHash, Representation Delta)> deltas)
    {
        _keys = new ulong[deltas.Count];
        _hashes = new byte[deltas.Count][];
        _deltas = new Representation[deltas.Count];
        for (var i = 0; i < deltas.Count; i++)
        {
            _hashes[i] = deltas[i].DictionaryHash;
            _keys[i] = BitConverter.ToUInt64(deltas[i].DictionaryHash);
            _deltas[i] = deltas[i].Delta;
        }
    }

    /// <summary>How many deltas this file has (one per earlier version and coding).</summary>
    public int Count => _deltas.Length;

    /// <summary>The SHA-256 of each dictionary, in the order of <see cref="Deltas"/>.</summary>
    public IReadOnlyList<byte[]> DictionaryHashes => _hashes;

    public IReadOnlyList<Representation> Deltas => _deltas;

    /// <summary>
    /// The smallest delta against the dictionary whose SHA-256 is <paramref name="dictionaryHash"/>
    /// in a coding allowed (<paramref name="dcz"/>, <paramref name="dcb"/>), or
    /// <see langword="null"/>. A set holds at most two deltas for each of
    /// <see cref="DictionaryOptions.MaxVersions"/> versions, so the probe is a scan of that many
    /// 64-bit keys (the hash's first eight bytes, which are uniformly distributed), then a full
    /// comparison for each match; no allocation.
    /// </summary>
    public Representation? Find(ReadOnlySpan<byte> dictionaryHash, bool dcz = true, bool dcb = true)
    {
        if (dictionaryHash.Length != 32)
        {
            return null;
        }

        var key = BitConverter.ToUInt64(dictionaryHash);
        Representation? best = null;
        for (var i = 0; i < _keys.Length; i++)
        {
            var delta = _deltas[i];
            if (_keys[i] == key && (delta.Coding == ContentCoding.Dcz ? dcz : dcb) && dictionaryHash.SequenceEqual(_hashes[i])
                && (best is null || delta.Length < best.Length))
            {
                best = delta;
            }
        }

        return best;
    }
}
