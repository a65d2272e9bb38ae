using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// The versions of fingerprinted assets kept as compression dictionaries (RFC 9842): the
/// bytes of each, by the SHA-256 a browser names in <c>Available-Dictionary</c>, grouped by
/// the asset's <c>match</c> pattern (<see cref="DictionaryMatch"/>). Kept by content, not by
/// snapshot, so a version outlives the file it came from: a live update or an atomic swap of
/// the whole folder drops the entry, and its bytes stay here as the dictionary for the next.
/// </summary>
/// <remarks>
/// Bounded twice (<see cref="DictionaryOptions"/>): at most <c>MaxVersions</c> per asset, the
/// oldest dropped first, and at most <c>MaxBytes</c> in all, the oldest of any asset dropped
/// first. Every byte kept is also reserved from the catalog's <see cref="MemoryBudget"/>, even
/// when the array is the one the entry in force holds: the two are given back at different
/// times, and counting the bytes twice while both hold them can only err on the safe side.
/// Used by one thread, <see cref="DeltaMaker"/>'s; not thread-safe.
/// </remarks>
internal sealed class KeptVersions
{
    private readonly DictionaryOptions _options;
    private readonly MemoryBudget _budget;
    private readonly Dictionary<string, List<Version>> _byAsset = new(StringComparer.Ordinal);
    private readonly LinkedList<Version> _oldestFirst = new();
    private long _bytes;

    public KeptVersions(DictionaryOptions options, MemoryBudget budget)
    {
        _options = options;
        _budget = budget;
    }

    /// <summary>The bytes of every version kept.</summary>
    public long Bytes => _bytes;

    /// <summary>How many versions are kept.</summary>
    public int Count => _oldestFirst.Count;

    /// <summary>Every version kept, oldest first.</summary>
    public IEnumerable<Version> OldestFirst => _oldestFirst;

    /// <summary>Changes with every version kept or dropped, so that a writer can tell whether there is anything new to save.</summary>
    public long Generation { get; private set; }

    /// <summary>The versions of the asset <paramref name="match"/> names, oldest first; empty when none.</summary>
    public IReadOnlyList<Version> Of(string match) => _byAsset.TryGetValue(match, out var versions) ? versions : [];

    /// <summary>
    /// Keeps <paramref name="content"/> as the newest version of <paramref name="match"/>, unless
    /// it is kept already (a file that came back). Older versions make room: the asset's
    /// beyond <c>MaxVersions</c>, then the oldest of any asset while the bytes or the memory
    /// budget are short. False when it cannot be kept at all (larger than <c>MaxBytes</c>, or no
    /// room in the budget with nothing left to drop).
    /// </summary>
    public bool Keep(string match, byte[] sha256, byte[] content)
    {
        if (!_byAsset.TryGetValue(match, out var versions))
        {
            versions = [];
            _byAsset[match] = versions;
        }

        foreach (var kept in versions)
        {
            if (kept.Sha256.AsSpan().SequenceEqual(sha256))
            {
                return true;
            }
        }

        if (content.Length > _options.MaxBytes)
        {
            return false;
        }

        while (versions.Count >= _options.MaxVersions)
        {
            Drop(versions[0]);
        }

        while (_bytes + content.Length > _options.MaxBytes || !_budget.TryReserve(content.Length))
        {
            if (_oldestFirst.First is not { } oldest)
            {
                return false;
            }

            Drop(oldest.Value);
        }

        var version = new Version(match, sha256, content);
        version.Node = _oldestFirst.AddLast(version);

        // Dropping may have removed the asset's list; take it again.
        if (!_byAsset.TryGetValue(match, out versions))
        {
            versions = [];
            _byAsset[match] = versions;
        }

        versions.Add(version);
        _bytes += content.Length;
        Generation++;
        return true;
    }

    private void Drop(Version version)
    {
        _oldestFirst.Remove(version.Node!);
        var versions = _byAsset[version.Match];
        versions.Remove(version);
        if (versions.Count == 0)
        {
            _byAsset.Remove(version.Match);
        }

        _bytes -= version.Content.Length;
        _budget.Release(version.Content.Length);
        Generation++;
    }

    /// <summary>Gives every byte back to the budget, when compression stops.</summary>
    public void Clear()
    {
        while (_oldestFirst.First is { } oldest)
        {
            Drop(oldest.Value);
        }
    }

    /// <summary>One kept version: its asset, the SHA-256 of its bytes, and the bytes.</summary>
    internal sealed class Version(string match, byte[] sha256, byte[] content)
    {
        public string Match { get; } = match;

        public byte[] Sha256 { get; } = sha256;

        public byte[] Content { get; } = content;

        public LinkedListNode<Version>? Node { get; set; }
    }
}
