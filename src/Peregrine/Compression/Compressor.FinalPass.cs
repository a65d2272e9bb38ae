using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// The final pass: files that got fast variants in the first pass are compressed again at
/// final quality, on threads at the lowest priority, and only while the first pass has nothing
/// queued. Each result is published over the fast variants it replaces.
/// </summary>
internal sealed partial class Compressor
{
    private void WorkFinalPass()
    {
        WorkerPriority.LowerCurrentThread();
        var stopping = _stopping.Token;
        try
        {
            while (true)
            {
                if (!TryTakeUpgrade(out var upgrade))
                {
                    // Blocking is what this thread is for; a release may find the queue emptied
                    // by a retirement since, and the loop then waits again.
                    _upgradeSignal.Wait(stopping);
                    continue;
                }

                // The first pass goes first: a file without any variant gains more from a fast
                // one than a file with one gains from a better one. Waited for once the upgrade
                // is taken, not before: files queued before it was published are then certain
                // to be seen, where a look before the take could have been made before they were.
                _firstPassIdle.Wait(stopping);
                CompleteUpgrade(upgrade, MakeFinal(upgrade, stopping));
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
            // Disposed: the rest of the queue is dropped; the fast variants stay as they are.
        }
    }

    /// <summary>The oldest upgrade waiting, taken out of the queue; from here a retirement of its entry is settled by <see cref="CompleteUpgrade"/>.</summary>
    private bool TryTakeUpgrade(out PendingUpgrade upgrade)
    {
        lock (_gate)
        {
            if (!_disposed && _upgrades.First is { } first)
            {
                _upgrades.RemoveFirst();
                _upgradeNodes.Remove(first.Value.Entry);
                upgrade = first.Value;
                return true;
            }
        }

        upgrade = default;
        return false;
    }

    private EncodedVariants MakeFinal(PendingUpgrade upgrade, CancellationToken stopping)
    {
        lock (_gate)
        {
            if (_retired.Contains(upgrade.Entry))
            {
                // Dropped while it waited: nothing to make, its memory is given back below.
                return upgrade.Current;
            }
        }

        try
        {
            return _encoder.Upgrade(upgrade.Entry, upgrade.Current, upgrade.Codings, stopping);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            // As in the first pass; the fast variants were made from the indexed bytes and stay.
            CompressionLog.SourceUnreadable(_logger, upgrade.Entry.PhysicalPath, ex.Message);
            return upgrade.Current;
        }
        catch (Exception ex) when (ex is not OperationCanceledException)
        {
            CompressionLog.Failed(_logger, upgrade.Entry.PhysicalPath, ex);
            return upgrade.Current;
        }
    }

    private void CompleteUpgrade(PendingUpgrade upgrade, EncodedVariants variants)
    {
        var entry = upgrade.Entry;
        bool published, idle;
        lock (_gate)
        {
            _inFlight.Remove(entry);
            published = !_retired.Remove(entry);
            if (published)
            {
                if (!ReferenceEquals(variants, upgrade.Current))
                {
                    entry.PublishEncoded(variants);
                    _encoder.ReleaseReplaced(upgrade.Current, variants);
                }

                _progress.RecordUpgrade();
            }
            else
            {
                _encoder.ReleaseReplaced(variants, upgrade.Current);
                _encoder.Release(upgrade.Current);
            }

            if (!_disposed)
            {
                _upgrading--;
            }

            _progress.RecordFinal();
            idle = SettleLocked();
        }

        if (published)
        {
            VariantsPublished?.Invoke(entry, variants, true);
        }

        if (idle)
        {
            TrimWhenQuiet();
        }
    }

    /// <summary>An entry served with first-pass variants, and the codings the final pass makes again.</summary>
    private readonly record struct PendingUpgrade(CatalogEntry Entry, EncodedVariants Current, ContentCodingSet Codings);
}
