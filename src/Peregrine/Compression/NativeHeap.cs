using Peregrine.Interop;

namespace Peregrine.Compression;

/// <summary>
/// Gives the C heap's free memory back to the system once the compression queue is empty.
/// The Brotli and zstd encoders allocate their windows and hash tables with <c>malloc</c>
/// (megabytes each at Brotli 11 and zstd 19) and free them after each file, but glibc keeps
/// freed memory in the compressing thread's arena: without this the server's idle footprint
/// carries the last batch's encoder state (docs/performance.md, "Native heap after compression").
/// </summary>
internal static class NativeHeap
{
    private static bool s_unavailable = !PlatformParts.IsNative;

    /// <summary>
    /// Caps glibc's arenas at one per CPU rather than eight, unless <c>MALLOC_ARENA_MAX</c> is
    /// set. Each thread that calls <c>malloc</c> while another holds an arena gets an arena of its
    /// own, and every arena keeps its own free pages; the server's threads allocate little from
    /// the C heap, most of it at start-up (docs/performance.md, "Fewer malloc arenas"). Call it before
    /// the threads start. Only the server calls it: in the library, the application owns its heap.
    /// </summary>
    public static void LimitArenas()
    {
        if (s_unavailable || Environment.GetEnvironmentVariable("MALLOC_ARENA_MAX") is not null)
        {
            return;
        }

        try
        {
            _ = Libc.mallopt(Libc.ArenaMax, Math.Max(2, Environment.ProcessorCount));
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            s_unavailable = true;
        }
    }

    /// <summary>
    /// <c>malloc_trim(0)</c>: returns free pages of every arena. A no-op where the C library
    /// has no such call (musl, other systems).
    /// </summary>
    public static void Trim()
    {
        if (s_unavailable)
        {
            return;
        }

        try
        {
            _ = Libc.malloc_trim(0);
        }
        catch (Exception ex) when (ex is DllNotFoundException or EntryPointNotFoundException)
        {
            s_unavailable = true;
        }
    }
}
