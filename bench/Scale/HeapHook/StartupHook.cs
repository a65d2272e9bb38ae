using System.Globalization;

/// <summary>
/// Loaded by the runtime before Main when named in DOTNET_STARTUP_HOOKS. The type must be
/// called StartupHook, in no namespace, with a static Initialize (the runtime's contract).
/// </summary>
/// <remarks>
/// A background thread polls for the file named by PEREGRINE_SCALE_HEAP_TRIGGER. When it
/// appears, the hook records the heap as of the last collection, times a forced a full blocking compacting
/// collection (the pause a full GC costs with this many catalog objects alive), records the live heap, writes both as "key value" lines to
/// PEREGRINE_SCALE_HEAP_OUT and deletes the trigger. Polling costs one stat(2) every 20 ms on
/// an otherwise idle thread; the benchmark reads RSS before it asks, since the forced
/// collection may return memory to the OS.
/// </remarks>
internal static class StartupHook
{
    public static void Initialize()
    {
        var trigger = Environment.GetEnvironmentVariable("PEREGRINE_SCALE_HEAP_TRIGGER");
        var output = Environment.GetEnvironmentVariable("PEREGRINE_SCALE_HEAP_OUT");
        if (string.IsNullOrEmpty(trigger) || string.IsNullOrEmpty(output))
        {
            return;
        }

        var thread = new Thread(() => Watch(trigger, output))
        {
            IsBackground = true,
            Name = "Peregrine.Bench.Scale heap hook",
        };
        thread.Start();
    }

    private static void Watch(string trigger, string output)
    {
        while (true)
        {
            Thread.Sleep(20);
            if (!File.Exists(trigger))
            {
                continue;
            }

            var before = GC.GetGCMemoryInfo(GCKind.Any);
            var started = System.Diagnostics.Stopwatch.GetTimestamp();
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
            var fullGc = System.Diagnostics.Stopwatch.GetElapsedTime(started);
            GC.WaitForPendingFinalizers();
            GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);
            var after = GC.GetGCMemoryInfo(GCKind.FullBlocking);
            var lines = new[]
            {
                Line("heap_at_last_gc_bytes", before.HeapSizeBytes),
                Line("committed_at_last_gc_bytes", before.TotalCommittedBytes),
                Line("full_gc_microseconds", (long)fullGc.TotalMicroseconds),
                Line("live_heap_bytes", GC.GetTotalMemory(forceFullCollection: false)),
                Line("heap_after_gc_bytes", after.HeapSizeBytes),
                Line("committed_after_gc_bytes", after.TotalCommittedBytes),
                Line("allocated_total_bytes", GC.GetTotalAllocatedBytes(precise: true)),
                Line("gen2_collections", GC.CollectionCount(2)),
            };
            File.WriteAllLines(output + ".tmp", lines);
            File.Move(output + ".tmp", output, overwrite: true);
            File.Delete(trigger);
        }
    }

    private static string Line(string key, long value) => key + " " + value.ToString(CultureInfo.InvariantCulture);
}
