using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// The versions: each entry in force taken in (its bytes hashed and kept) or dropped, the kept
/// versions set anew from a source's history, and an entry's bytes read for either.
/// </summary>
internal sealed partial class DeltaMaker
{
    private void Add(CatalogEntry entry)
    {
        var match = entry.DictionaryMatch!;
        if (_hashes.ContainsKey(entry) || Content(entry) is not { } content)
        {
            return;
        }

        var hash = new byte[32];
        ContentHash.HashData(content, hash);
        _hashes[entry] = hash;
        if (!_inForce.TryGetValue(match, out var entries))
        {
            entries = [];
            _inForce[match] = entries;
        }

        entries.Add(entry);
        _kept.Keep(match, hash, content);

        // Every version in force gets its deltas against the versions kept now: the new one
        // against the old, and (for a rollback) the old ones in force against the new.
        foreach (var version in entries)
        {
            Refresh(version, content: ReferenceEquals(version, entry) ? content : null);
        }
    }

    /// <summary>
    /// Sets the kept versions anew from a source's history: <paramref name="earlier"/> oldest
    /// first, then the files in force (by Last-Modified, then path), then the deltas of every file
    /// in force against them. What the process kept before goes, so that two replicas that
    /// started at different times, or saw different releases come and go, keep the same versions
    /// and so make the same deltas (zstd's output is a function of its input and parameters).
    /// </summary>
    private void Reset(IReadOnlyList<KeyValuePair<string, string>> earlier, List<CatalogEntry> inForce)
    {
        _kept.Clear();
        foreach (var (path, file) in earlier)
        {
            if (DictionaryMatch.For(_requestPath, path) is not { } match)
            {
                continue;
            }

            try
            {
                if (new FileInfo(file).Length <= _options.MaxBytes)
                {
                    var bytes = File.ReadAllBytes(file);
                    var hash = new byte[32];
                    ContentHash.HashData(bytes, hash);
                    _kept.Keep(match, hash, bytes);
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Removed by a later release meanwhile: that release's reset follows.
            }
        }

        foreach (var entry in inForce)
        {
            if (Content(entry) is not { } content)
            {
                continue;
            }

            if (!_hashes.TryGetValue(entry, out var hash))
            {
                hash = new byte[32];
                ContentHash.HashData(content, hash);
                _hashes[entry] = hash;
                if (!_inForce.TryGetValue(entry.DictionaryMatch!, out var entries))
                {
                    entries = [];
                    _inForce[entry.DictionaryMatch!] = entries;
                }

                entries.Add(entry);
            }

            _kept.Keep(entry.DictionaryMatch!, hash, content);
        }

        foreach (var entry in inForce)
        {
            if (_hashes.ContainsKey(entry))
            {
                Refresh(entry, content: null);
            }
        }
    }

    private void Drop(CatalogEntry entry)
    {
        if (!_hashes.Remove(entry))
        {
            return;
        }

        var match = entry.DictionaryMatch!;
        if (_inForce.TryGetValue(match, out var entries))
        {
            entries.Remove(entry);
            if (entries.Count == 0)
            {
                _inForce.Remove(match);
            }
        }

        // The version itself stays kept: it is the dictionary the next version is sent against.
        Release(entry.MadeDeltas);
    }

    /// <summary>
    /// The entry's bytes: those it holds, or read from the file it is served from, and then
    /// only while they are still the indexed ones (same length, same tag). Null for a file
    /// larger than <see cref="DictionaryOptions.MaxBytes"/>, one too large to hash at index time
    /// (its tag is made from its length and time, never equal to a content tag), or one that
    /// changed.
    /// </summary>
    private byte[]? Content(CatalogEntry entry)
    {
        var identity = entry.Identity;
        if (identity.Length > _options.MaxBytes)
        {
            return null;
        }

        if (identity.Content is { } held)
        {
            return held;
        }

        if (identity.PhysicalPath is not { } path)
        {
            return null;
        }

        try
        {
            var bytes = File.ReadAllBytes(path);
            return bytes.Length == identity.Length && EntityTag.Compute(bytes) == identity.ContentTag ? bytes : null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // Gone or unreadable: this version gets no deltas and is not kept.
            return null;
        }
    }
}
