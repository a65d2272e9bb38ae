using System.Runtime.ExceptionServices;

namespace Peregrine.Sources;

/// <summary>
/// A parallel loop for the publisher's thread, which scans folders and builds entries: the
/// calling thread works through the items itself, and thread-pool threads help as they come
/// free. The caller waits only for items a helper has begun, never for a helper to start.
/// </summary>
/// <remarks>
/// Written here because <see cref="Parallel.For(int, int, ParallelOptions, Action{int})"/> also
/// queues its helpers to the pool but then waits for every helper it queued to run, even one
/// that finds no item left: called from a thread of its own over a single item while the pool's
/// threads were all busy, it took 4.4 s (a sleeping work item per pool thread, .NET 10), and a
/// file written to the root waited that long to be published. A server under load keeps its
/// pool busy; a change must not wait for it.
/// </remarks>
internal static class HelpedLoop
{
    /// <summary>
    /// Runs <paramref name="body"/> for 0 to <paramref name="count"/> - 1, on up to
    /// <see cref="Environment.ProcessorCount"/> threads, the caller's among them. The first
    /// exception a body throws stops the items not yet begun and is rethrown as it is, once every
    /// item begun has ended; a cancelled token stops the loop the same way.
    /// </summary>
    public static void For(int count, Action<int> body, CancellationToken cancellationToken)
    {
        var helpers = Math.Min(Environment.ProcessorCount, count) - 1;
        if (helpers <= 0)
        {
            for (var i = 0; i < count; i++)
            {
                cancellationToken.ThrowIfCancellationRequested();
                body(i);
            }

            return;
        }

        var loop = new Loop(count, body, cancellationToken);
        for (var helper = 0; helper < helpers; helper++)
        {
            ThreadPool.UnsafeQueueUserWorkItem(static loop => loop.Work(), loop, preferLocal: false);
        }

        loop.Work();
        loop.WaitForHelpers();
        loop.Failure?.Throw();
        cancellationToken.ThrowIfCancellationRequested();
    }

    private sealed class Loop(int count, Action<int> body, CancellationToken cancellationToken)
    {
        private readonly object _gate = new();
        private int _next = -1;

        // Threads inside Work that may still run an item: each counts itself in before it takes
        // an index, so one that took an item is counted while the caller waits.
        private int _working;
        private ExceptionDispatchInfo? _failure;

        public ExceptionDispatchInfo? Failure => Volatile.Read(ref _failure);

        public void Work()
        {
            Interlocked.Increment(ref _working);
            try
            {
                while (Volatile.Read(ref _failure) is null && !cancellationToken.IsCancellationRequested)
                {
                    var i = Interlocked.Increment(ref _next);
                    if (i >= count)
                    {
                        return;
                    }

                    try
                    {
                        body(i);
                    }
                    catch (Exception ex)
                    {
                        Interlocked.CompareExchange(ref _failure, ExceptionDispatchInfo.Capture(ex), null);
                    }
                }
            }
            finally
            {
                if (Interlocked.Decrement(ref _working) == 0)
                {
                    lock (_gate)
                    {
                        Monitor.PulseAll(_gate);
                    }
                }
            }
        }

        /// <summary>
        /// Called by the caller once its own <see cref="Work"/> has returned, when no item is left
        /// to begin: waits for the helpers still in an item. A helper that starts later finds
        /// none and leaves without touching anything the caller reads.
        /// </summary>
        public void WaitForHelpers()
        {
            lock (_gate)
            {
                while (Volatile.Read(ref _working) > 0)
                {
                    Monitor.Wait(_gate);
                }
            }
        }
    }
}
