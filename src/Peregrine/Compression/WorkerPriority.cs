using System.Runtime.InteropServices;

namespace Peregrine.Compression;

/// <summary>
/// Lowers the scheduling priority of the calling thread, for the final compression pass: it
/// runs only when a core would otherwise idle, so it never takes CPU from requests.
/// </summary>
/// <remarks>
/// <see cref="Thread.Priority"/> is honoured on Windows but not by the .NET runtime on Linux,
/// where each thread is its own task and <c>setpriority(PRIO_PROCESS, tid, 19)</c> gives it the
/// lowest weight the fair scheduler has short of <c>SCHED_IDLE</c> (15 against 1,024 for a
/// request thread). Raising the nice value needs no privilege; a failure leaves the thread at
/// the normal priority, which is what it had before.
/// </remarks>
internal static partial class WorkerPriority
{
    private const int PrioProcess = 0;
    private const int LowestNice = 19;

    public static void LowerCurrentThread()
    {
        Thread.CurrentThread.Priority = ThreadPriority.Lowest;
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        try
        {
            _ = setpriority(PrioProcess, gettid(), LowestNice);
        }
        catch (Exception ex) when (ex is EntryPointNotFoundException or DllNotFoundException)
        {
            // A C library without gettid (glibc before 2.30): the thread keeps the normal priority.
        }
    }

    [LibraryImport("libc")]
    private static partial int gettid();

    [LibraryImport("libc")]
    private static partial int setpriority(int which, int who, int priority);
}
