using System.Collections.Concurrent;
using System.IO.Pipelines;

namespace Peregrine.FastPath;

/// <summary>
/// Idle and slow-head timeouts for fast-path connections, enforced the way Kestrel enforces
/// its own: a once-a-second sweep over the open connections, so the per-request cost is one
/// timestamp write rather than a timer or a cancellation registration per read.
/// </summary>
internal static class FastPathHeartbeat
{
    private static readonly ConcurrentDictionary<Watched, byte> s_connections = new();
    private static readonly Timer s_timer = new(_ => Sweep(), null, 1000, 1000);

    public static Watched Watch(PipeReader input)
    {
        GC.KeepAlive(s_timer);
        var watched = new Watched(input);
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
                // The read in progress returns as cancelled; the connection loop then closes.
                connection.Input.CancelPendingRead();
            }
        }
    }

    internal sealed class Watched : IDisposable
    {
        public long Deadline = long.MaxValue;

        public Watched(PipeReader input)
        {
            Input = input;
        }

        public PipeReader Input { get; }

        /// <summary>Nothing may be pending for longer than <paramref name="timeout"/> from now.</summary>
        public void Arm(TimeSpan timeout) => Volatile.Write(ref Deadline, Environment.TickCount64 + (long)timeout.TotalMilliseconds);

        public void Dispose() => s_connections.TryRemove(this, out _);
    }
}
