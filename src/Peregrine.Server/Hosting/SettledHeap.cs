using Peregrine.Compression;
using Peregrine.Live;

namespace Peregrine.Server.Hosting;

/// <summary>
/// One compacting collection once start-up has settled: the first index is published and the
/// compressor has had nothing to do for <see cref="Delay"/>. Start-up allocates a few MiB
/// (configuration, the host, the scan, the first variants) and, under the server's fixed gen-0
/// budget, often no collection has run by then, so the garbage stays resident for as long as the
/// server idles. A collection in the GC's aggressive mode frees it and gives the emptied regions
/// back, and <c>malloc_trim</c> then returns what finalized native handles released
/// (docs/performance.md, "The heap after start-up").
/// Only the server does this: in the library, the application owns its heap. Skipped when the
/// managed heap is above <see cref="MaxHeapBytes"/>: there a blocking compaction would stall
/// requests for longer than the memory is worth, and a large tree had its compacting collection
/// before the first request (FileCatalog).
/// </summary>
internal static class SettledHeap
{
    /// <summary>How long the compressor stays idle before the collection.</summary>
    internal static readonly TimeSpan Delay = TimeSpan.FromSeconds(1);

    /// <summary>The largest managed heap compacted this way.</summary>
    internal const long MaxHeapBytes = 64L * 1024 * 1024;

    /// <summary>Waits for the first index and an idle compressor, then collects once; returns early if the server stops or the index failed.</summary>
    /// <returns>True when the collection ran.</returns>
    public static Task<bool> CollectOnceSettledAsync(FileCatalog catalog, Compressor compressor, CancellationToken stopping)
        => CollectOnceSettledAsync(catalog, compressor, MaxHeapBytes, Collect, stopping);

    /// <summary>
    /// As above, with the largest heap that is compacted and the collection itself given: tests
    /// count the call rather than stall their whole host, whose heap is larger than a server's.
    /// </summary>
    internal static async Task<bool> CollectOnceSettledAsync(FileCatalog catalog, Compressor compressor, long maxHeapBytes, Action collect, CancellationToken stopping)
    {
        try
        {
            await catalog.Ready.WaitAsync(stopping).ConfigureAwait(false);
            while (true)
            {
                await compressor.WhenIdle().WaitAsync(stopping).ConfigureAwait(false);
                await Task.Delay(Delay, stopping).ConfigureAwait(false);
                if (compressor.WhenIdle().IsCompleted)
                {
                    break;
                }
            }
        }
        catch (Exception ex) when (ex is OperationCanceledException || catalog.Ready.IsFaulted)
        {
            // Stopping, or no index to settle on (the failure is logged where it happened).
            return false;
        }

        if (GC.GetTotalMemory(forceFullCollection: false) > maxHeapBytes)
        {
            return false;
        }

        collect();
        return true;
    }

    private static void Collect()
    {
        GC.Collect(GC.MaxGeneration, GCCollectionMode.Aggressive, blocking: true, compacting: true);
        NativeHeap.Trim();
    }
}
