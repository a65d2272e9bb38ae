using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Live;

namespace Peregrine.Compression;

/// <summary>
/// Following the catalog: the subscription to the snapshots it publishes (the dictionary deltas'
/// maker's too), and each snapshot taken in: its new entries queued, the variants of the entries
/// it dropped retired.
/// </summary>
internal sealed partial class Compressor
{
    /// <summary>
    /// The compressor of <paramref name="catalog"/>: when compression is on, it follows every
    /// snapshot the catalog publishes from now on, and the one in force if there is one
    /// already. Made once per catalog, by the container (<c>AddPeregrine</c>).
    /// </summary>
    public static Compressor Follow(FileCatalog catalog, ILoggerFactory loggerFactory)
    {
        var compressor = new Compressor(catalog.Options.Compression, catalog.Budget, loggerFactory.CreateLogger("Peregrine"));
        if (compressor._options.Enabled)
        {
            compressor._followed = catalog;
            catalog.Published += compressor.OnPublished;
            if (DeltaMaker.CanRun(compressor._options))
            {
                // A bucket's kept versions come from the bucket (docs/serving.md), never from
                // this process's history, so that its replicas agree; a folder's are saved.
                var store = compressor._options.CacheDirectory is { } cache && catalog.Options.Bucket is null
                    ? KeptVersionStore.Open(cache, KeptVersionStore.KeyFor(catalog.Options), compressor._logger)
                    : null;
                compressor.Deltas = new DeltaMaker(compressor._options.Dictionaries, catalog.Budget, compressor._logger, store, catalog.Options.EarlierVersions, catalog.Options.RequestPath.Value ?? "");
                catalog.Published += compressor.Deltas.OnPublished;
            }

            // A snapshot published before the subscription is caught up with here; one
            // published meanwhile is seen twice, and queueing an entry twice is harmless.
            if (catalog.Current is { } current)
            {
                compressor.OnPublished(current, null);
                compressor.Deltas?.OnPublished(current, null, null);
            }
        }

        return compressor;
    }

    /// <summary>
    /// Takes in a published snapshot: the variants of the entries it dropped from
    /// <paramref name="previous"/> are retired, and its negotiable entries are queued (those
    /// reused from <paramref name="previous"/> already have their variants and are skipped).
    /// </summary>
    internal void OnPublished(CatalogSnapshot snapshot, CatalogSnapshot? previous, SnapshotDelta? delta = null)
    {
        if (delta is not null)
        {
            // An incremental update says what it changed: no pass over the whole snapshot.
            foreach (var entry in delta.Removed)
            {
                if (entry.Negotiable)
                {
                    Retire(entry);
                }
            }

            Enqueue(delta.Added.Where(entry => entry.Negotiable));
            return;
        }

        if (previous is not null)
        {
            foreach (var entry in previous.Files)
            {
                if (entry.Negotiable && !snapshot.Holds(entry))
                {
                    Retire(entry);
                }
            }
        }

        Enqueue(snapshot.Files.Where(entry => entry.Negotiable));
    }
}
