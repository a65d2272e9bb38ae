using System.Collections.Concurrent;
using System.Diagnostics;
using Microsoft.Extensions.Logging;
using Peregrine.Logging;

namespace Peregrine.Send;

/// <summary>
/// Reports reads from disk that do not return: a response sent from disk registers itself for
/// its life, marks each read it waits on, and a timer looks once a second for a read waiting
/// longer than <see cref="Limit"/>. Such a read is logged once per file (until the file reads
/// again), while it still hangs: a read that never returns holds a thread-pool thread and its
/// client waits, and nothing else would say so. Only the disk path pays for it (one small object
/// per response, a timestamp per read); files held in memory never register.
/// </summary>
internal sealed class DiskReadWatch : IDisposable
{
    /// <summary>How long one read may wait before it is reported.</summary>
    internal static readonly TimeSpan Limit = TimeSpan.FromSeconds(5);

    private readonly ILogger _logger;
    private readonly ConcurrentDictionary<Response, byte> _inFlight = new(ReferenceEqualityComparer.Instance);
    private readonly ConcurrentDictionary<string, byte> _reported = new(StringComparer.Ordinal);
    private readonly Lock _gate = new();
    private Timer? _timer;

    public DiskReadWatch(ILogger logger) => _logger = logger;

    /// <summary>Registers a response sent from <paramref name="path"/>; dispose it when the response ends.</summary>
    public Response Start(string path)
    {
        if (_timer is null)
        {
            // Made with the first response from disk: a server whose files are all in memory has none.
            lock (_gate)
            {
                _timer ??= new Timer(static state => ((DiskReadWatch)state!).Check(), this, TimeSpan.FromSeconds(1), TimeSpan.FromSeconds(1));
            }
        }

        var response = new Response(this, path);
        _inFlight.TryAdd(response, 0);
        return response;
    }

    private void Check()
    {
        if (_inFlight.IsEmpty)
        {
            return;
        }

        var now = Stopwatch.GetTimestamp();
        foreach (var (response, _) in _inFlight)
        {
            var since = Volatile.Read(ref response.WaitingSince);
            if (since != 0 && Stopwatch.GetElapsedTime(since, now) > Limit && _reported.TryAdd(response.Path, 0))
            {
                PeregrineLog.ReadHanging(_logger, response.Path, (int)Stopwatch.GetElapsedTime(since, now).TotalSeconds);
            }
        }
    }

    public void Dispose() => _timer?.Dispose();

    /// <summary>One response sent from disk.</summary>
    internal sealed class Response(DiskReadWatch watch, string path) : IDisposable
    {
        internal long WaitingSince;

        public string Path { get; } = path;

        /// <summary>A read begins.</summary>
        public void Reading() => Volatile.Write(ref WaitingSince, Stopwatch.GetTimestamp());

        /// <summary>The read returned: the file reads again, so a later hang is reported anew.</summary>
        public void Read()
        {
            Volatile.Write(ref WaitingSince, 0);
            if (!watch._reported.IsEmpty)
            {
                watch._reported.TryRemove(Path, out _);
            }
        }

        public void Dispose() => watch._inFlight.TryRemove(this, out _);
    }
}
