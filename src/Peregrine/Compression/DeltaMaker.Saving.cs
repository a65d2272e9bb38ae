namespace Peregrine.Compression;

/// <summary>
/// The kept versions across restarts: read back from the <see cref="KeptVersionStore"/> before
/// the first snapshot is taken in, and saved once the work posted so far has changed them.
/// </summary>
internal sealed partial class DeltaMaker
{
    /// <summary>
    /// Keeps the versions saved before a restart, oldest first, before the first snapshot's
    /// entries are taken in: those still in force are found kept, and a deploy after the
    /// restart gets deltas against the versions served before it.
    /// </summary>
    private void Restore()
    {
        try
        {
            if (_store is not null)
            {
                foreach (var (match, sha256, content) in _store.Load(_options.MaxBytes))
                {
                    _kept.Keep(match, sha256, content);
                }

                _savedGeneration = _kept.Generation;
            }
        }
        finally
        {
            Done();
        }
    }

    private void Save()
    {
        if (_store is not null && _kept.Generation != _savedGeneration)
        {
            _store.Save(_kept.OldestFirst);
            _savedGeneration = _kept.Generation;
        }
    }
}
