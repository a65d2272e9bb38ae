using System.Collections.Concurrent;
using System.Net;
using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// Tells which path answered a connection on a fast-path host: installed behind the fast path
/// (<c>PeregrineHost.StartAsync(behindFastPath: recorder.Install)</c>), it sees only the
/// connections the fast path hands to Kestrel, and notes each by its client's port. It costs
/// nothing on connections the fast path keeps, and adds nothing to the server under test.
/// </summary>
public sealed class HandOffRecorder
{
    private readonly ConcurrentDictionary<int, byte> _ports = new();

    public void Install(ListenOptions listen) => listen.Use(next => connection =>
    {
        if (connection.RemoteEndPoint is IPEndPoint client)
        {
            _ports[client.Port] = 0;
        }

        return next(connection);
    });

    /// <summary>
    /// Whether the connection from <paramref name="clientPort"/> reached Kestrel, asked once
    /// the exchange is over (the note is taken before Kestrel reads a byte). The note is
    /// dropped, since the port may be used again.
    /// </summary>
    public bool TakeHandedOff(int clientPort) => _ports.TryRemove(clientPort, out _);
}
