using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// The deltas: an entry's against every other kept version of its asset, in each dictionary
/// coding (dcz by zstd; dcb by brotli, where brotli 1.1 is linked in), each checked by decoding
/// it, then published on the entry.
/// </summary>
internal sealed partial class DeltaMaker
{
    /// <summary>
    /// Publishes on <paramref name="entry"/> its deltas against every kept version of its asset
    /// but its own: those it has are kept, missing ones made, those against versions no longer
    /// kept dropped. Nothing is published when nothing changed. An entry whose own version is
    /// no longer kept (a folder that holds many old builds) gets none: it is not one of the
    /// recent versions a browser is likely to ask for, and this bounds the deltas of an asset
    /// to MaxVersions × (MaxVersions − 1) however many old files stay in the folder.
    /// </summary>
    private void Refresh(CatalogEntry entry, byte[]? content)
    {
        var own = _hashes[entry];
        var current = entry.MadeDeltas;
        var deltas = new List<(byte[] DictionaryHash, Representation Delta)>();
        var changed = false;
        var versions = _kept.Of(entry.DictionaryMatch!);
        if (!versions.Any(version => version.Sha256.AsSpan().SequenceEqual(own)))
        {
            versions = [];
        }

        foreach (var version in versions)
        {
            _stopping.Token.ThrowIfCancellationRequested();
            if (version.Sha256.AsSpan().SequenceEqual(own))
            {
                continue;
            }

            foreach (var coding in (ReadOnlySpan<ContentCoding>)[ContentCoding.Dcz, ContentCoding.Dcb])
            {
                if (coding == ContentCoding.Dcb && !BrotliDictionary.IsAvailable)
                {
                    continue;
                }

                if (current?.Find(version.Sha256, dcz: coding == ContentCoding.Dcz, dcb: coding == ContentCoding.Dcb) is { } existing)
                {
                    deltas.Add((version.Sha256, existing));
                    continue;
                }

                content ??= Content(entry);
                if (content is null)
                {
                    return;
                }

                if (Make(entry, content, version, coding) is { } made)
                {
                    deltas.Add((version.Sha256, made));
                    changed = true;
                }
            }
        }

        if (!changed && deltas.Count == (current?.Count ?? 0))
        {
            return;
        }

        entry.PublishDeltas(deltas.Count == 0 ? null : new DictionaryDeltas(deltas));
        if (current is not null)
        {
            foreach (var old in current.Deltas)
            {
                if (!deltas.Exists(d => ReferenceEquals(d.Delta, old)))
                {
                    _budget.Release(old.Length);
                }
            }
        }
    }

    /// <summary>
    /// The delta of <paramref name="content"/> against <paramref name="dictionary"/> in
    /// <paramref name="coding"/> (dcz, or dcb where brotli 1.1 is linked in), checked by decoding
    /// it; null when it saves nothing, does not decode, or finds no room in the budget.
    /// </summary>
    private Representation? Make(CatalogEntry entry, byte[] content, KeptVersions.Version dictionary, ContentCoding coding)
    {
        var delta = coding == ContentCoding.Dcb
            ? BrotliDictionary.Compress(content, dictionary.Content, dictionary.Sha256)
            : Zstd.CompressDcz(content, dictionary.Content, dictionary.Sha256);
        if (delta.Length >= content.Length)
        {
            return null;
        }

        var decodes = coding == ContentCoding.Dcb
            ? BrotliDictionary.DecodesTo(delta, dictionary.Content, dictionary.Sha256, content)
            : Zstd.DczDecodesTo(delta, dictionary.Content, dictionary.Sha256, content);
        if (!decodes)
        {
            CompressionLog.DeltaInvalid(_logger, entry.RelativePath);
            return null;
        }

        if (!_budget.TryReserve(delta.Length))
        {
            return null;
        }

        Interlocked.Increment(ref _made);
        return new Representation(coding, delta.Length, EntityTag.Compute(delta), delta, physicalPath: null);
    }

    private void Release(DictionaryDeltas? deltas)
    {
        if (deltas is null)
        {
            return;
        }

        foreach (var delta in deltas.Deltas)
        {
            _budget.Release(delta.Length);
        }
    }
}
