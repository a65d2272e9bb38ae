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
