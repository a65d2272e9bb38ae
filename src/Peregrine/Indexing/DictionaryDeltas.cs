namespace Peregrine.Indexing;

/// <summary>
/// The dcz representations of one file (RFC 9842 §4.2), one per earlier version it was encoded
/// against, each found by that version's SHA-256 as a browser names it in
/// <c>Available-Dictionary</c>. Made once and published on the entry with one reference write,
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

    /// <summary>How many earlier versions this file has a delta against.</summary>
    public int Count => _deltas.Length;

    /// <summary>The SHA-256 of each dictionary, in the order of <see cref="Deltas"/>.</summary>
    public IReadOnlyList<byte[]> DictionaryHashes => _hashes;

    public IReadOnlyList<Representation> Deltas => _deltas;

    /// <summary>
    /// The delta against the dictionary whose SHA-256 is <paramref name="dictionaryHash"/>, or
    /// <see langword="null"/>. A set holds at most <see cref="DictionaryOptions.MaxVersions"/>
    /// deltas, so the probe is a scan of that many 64-bit keys (the hash's first eight bytes,
    /// which are uniformly distributed), then one full comparison; no allocation.
    /// </summary>
    public Representation? Find(ReadOnlySpan<byte> dictionaryHash)
    {
        if (dictionaryHash.Length != 32)
        {
            return null;
        }

        var key = BitConverter.ToUInt64(dictionaryHash);
        for (var i = 0; i < _keys.Length; i++)
        {
            if (_keys[i] == key && dictionaryHash.SequenceEqual(_hashes[i]))
            {
                return _deltas[i];
            }
        }

        return null;
    }
}
