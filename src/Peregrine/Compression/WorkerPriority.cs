using Peregrine.Interop;

namespace Peregrine.Compression;

/// <summary>
/// Lowers the scheduling priority of the calling thread, for the final compression pass: it
/// runs only when a core would otherwise idle, so it never takes CPU from requests.
/// </summary>
/// <remarks>
/// <see cref="Thread.Priority"/> is honoured on Windows but not by the .NET runtime on Linux,
/// where each thread is its own task with its own policy. There the thread moves to
/// <c>SCHED_IDLE</c> (sched(7)): it runs only when nothing else wants the core, and a request
/// thread that wakes up preempts it at once rather than at the next tick, which a nice value
/// alone does not do (docs/performance.md,
/// "Compression threads"). Where that is refused it falls back to nice 19, the lowest weight of the normal
/// policy. Neither needs a privilege; a failure leaves the thread at the normal priority.
/// </remarks>
internal static class WorkerPriority
{
    private const int LowestNice = 19;

    public static void LowerCurrentThread()
    {
        Thread.CurrentThread.Priority = ThreadPriority.Lowest;
        if (!PlatformParts.IsNative)
        {
            return;
        }

        try
        {
            var tid = Libc.gettid();
            var priority = 0;
            if (Libc.sched_setscheduler(tid, Libc.SchedIdle, ref priority) != 0)
            {
                _ = Libc.setpriority(Libc.PrioProcess, tid, LowestNice);
            }
        }
        catch (Exception ex) when (ex is EntryPointNotFoundException or DllNotFoundException)
        {
            // A C library without gettid (glibc before 2.30): the thread keeps the normal priority.
        }
    }
}
