using System.Net;
using System.Net.Sockets;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// One origin (http://127.0.0.1:PORT) in front of servers that take turns: every connection is
/// relayed byte for byte to the port in force, and <see cref="SwitchTo"/> closes the connections
/// open so far, so a browser's next request reaches the other server. For tests where a browser
/// must meet two replicas under one origin, as behind a load balancer.
/// </summary>
public sealed class LoopbackForwarder : IDisposable
{
    private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
    private readonly CancellationTokenSource _closing = new();
    private readonly List<TcpClient> _open = [];
    private int _target;

    public LoopbackForwarder(int target)
    {
        _target = target;
        _listener.Start();
        _ = AcceptAsync();
    }

    public Uri Address => new($"http://127.0.0.1:{((IPEndPoint)_listener.LocalEndpoint).Port}/");

    /// <summary>Sends new connections to <paramref name="target"/> and closes the open ones.</summary>
    public void SwitchTo(int target)
    {
        Volatile.Write(ref _target, target);
        lock (_open)
        {
            foreach (var client in _open)
            {
                client.Dispose();
            }

            _open.Clear();
        }
    }

    public void Dispose()
    {
        _closing.Cancel();
        _listener.Stop();
        SwitchTo(0);
    }

    private async Task AcceptAsync()
    {
        while (!_closing.IsCancellationRequested)
        {
            TcpClient incoming;
            try
            {
                incoming = await _listener.AcceptTcpClientAsync(_closing.Token);
            }
            catch (Exception ex) when (ex is OperationCanceledException or ObjectDisposedException or SocketException)
            {
                return;
            }

            _ = RelayAsync(incoming);
        }
    }

    private async Task RelayAsync(TcpClient incoming)
    {
        var outgoing = new TcpClient();
        lock (_open)
        {
            _open.Add(incoming);
            _open.Add(outgoing);
        }

        try
        {
            await outgoing.ConnectAsync(IPAddress.Loopback, Volatile.Read(ref _target), _closing.Token);
            var a = incoming.GetStream();
            var b = outgoing.GetStream();
            await Task.WhenAny(a.CopyToAsync(b, _closing.Token), b.CopyToAsync(a, _closing.Token));
        }
        catch (Exception ex) when (ex is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // A side closed, or the forwarder switched: the connection ends.
        }
        finally
        {
            incoming.Dispose();
            outgoing.Dispose();
        }
    }
}
