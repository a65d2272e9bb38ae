using System.Collections.Concurrent;
using System.IO.Pipelines;

namespace Peregrine.Http1;

/// <summary>
/// Idle, slow-head and stalled-reader timeouts for fast-path connections, enforced the way Kestrel enforces
/// its own: a once-a-second sweep over the open connections, so the per-request cost is one
/// timestamp write rather than a timer or a cancellation registration per read.
/// </summary>
internal static class FastPathHeartbeat
{
    private static readonly ConcurrentDictionary<Watched, byte> s_connections = new();
    private static readonly Timer s_timer = new(_ => Sweep(), null, 1000, 1000);

    public static Watched Watch(PipeReader input, PipeWriter output)
    {
        GC.KeepAlive(s_timer);
        var watched = new Watched(input, output);
        s_connections.TryAdd(watched, 0);
        return watched;
    }

    private static void Sweep()
    {
        var now = Environment.TickCount64;
        foreach (var (connection, _) in s_connections)
        {
            if (now > Volatile.Read(ref connection.Deadline))
            {
                connection.Cancel(now);
            }
        }
    }

    internal sealed class Watched : IDisposable
    {
        public long Deadline = long.MaxValue;

        /// <summary>True while the connection waits for the client to take its response.</summary>
        public bool Flushing;

        private readonly Lock _gate = new();
        private bool _disposed;

        public Watched(PipeReader input, PipeWriter output)
        {
            Input = input;
            Output = output;
        }

        public PipeReader Input { get; }

        public PipeWriter Output { get; }

        /// <summary>Nothing may be pending for longer than <paramref name="timeout"/> from now.</summary>
        public void Arm(TimeSpan timeout) => Volatile.Write(ref Deadline, Environment.TickCount64 + (long)timeout.TotalMilliseconds);

        /// <summary>Nothing is timed until the next <see cref="Arm"/>.</summary>
        public void Disarm() => Volatile.Write(ref Deadline, long.MaxValue);

        /// <summary>
        /// Cancels the read or flush in progress, which returns as cancelled; the connection
        /// loop then closes. Never after <see cref="Dispose"/>: the pipes are Kestrel's by then,
        /// and a cancelled flush would reach its first response.
        /// </summary>
        public void Cancel(long now)
        {
            lock (_gate)
            {
                if (_disposed || now <= Volatile.Read(ref Deadline))
                {
                    return;
                }

                if (Volatile.Read(ref Flushing))
                {
                    Output.CancelPendingFlush();
                }
                else
                {
                    Input.CancelPendingRead();
                }
            }
        }

        public void Dispose()
        {
            lock (_gate)
            {
                _disposed = true;
            }

            s_connections.TryRemove(this, out _);
        }
    }
}
