using System.Net;
using System.Net.Sockets;
using System.Text;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// A TCP forwarder between a bucket client and the gateway, on a port that stays the same while
/// it is closed and opened again: closed, the bucket is unreachable (connections refused); and it
/// can answer the next connections' first request itself (503 SlowDown, 500) or hold them back,
/// as a store under load does.
/// </summary>
public sealed class S3Forwarder : IAsyncDisposable
{
    private readonly IPEndPoint _target;
    private readonly List<Socket> _connections = [];
    private readonly Lock _gate = new();
    private TcpListener? _listener;
    private CancellationTokenSource _stopping = new();
    private int _failNext;
    private int _failStatus;
    private string _failCode = "";
    private int _delayNext;
    private TimeSpan _delay;

    public S3Forwarder(Uri target)
    {
        _target = new IPEndPoint(IPAddress.Parse(target.Host), target.Port);
        Port = CephRgw.FreePort();
        Open();
    }

    public int Port { get; }

    public Uri Endpoint => new($"http://127.0.0.1:{Port}");

    /// <summary>Requests that were answered by the forwarder itself rather than passed on.</summary>
    public int Refused;

    /// <summary>Accepts connections again, on the same port.</summary>
    public void Open()
    {
        lock (_gate)
        {
            if (_listener is not null)
            {
                return;
            }

            _stopping = new CancellationTokenSource();
            var listener = new TcpListener(IPAddress.Loopback, Port);
            listener.Server.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
            listener.Start();
            _listener = listener;
            _ = AcceptAsync(listener, _stopping.Token);
        }
    }

    /// <summary>Stops listening and cuts every connection: the bucket is unreachable until <see cref="Open"/>.</summary>
    public void Close()
    {
        lock (_gate)
        {
            _stopping.Cancel();
            _listener?.Stop();
            _listener = null;
        }

        DropConnections();
    }

    /// <summary>Cuts the connections open now, so the next requests come on new ones.</summary>
    public void DropConnections()
    {
        lock (_connections)
        {
            foreach (var connection in _connections)
            {
                try
                {
                    connection.Close(0);
                }
                catch (ObjectDisposedException)
                {
                }
            }

            _connections.Clear();
        }
    }

    /// <summary>The next <paramref name="count"/> connections get <paramref name="status"/> with the S3 error <paramref name="code"/> for their first request, and are closed.</summary>
    public void FailNext(int count, int status, string code)
    {
        _failStatus = status;
        _failCode = code;
        Volatile.Write(ref _failNext, count);
        DropConnections();
    }

    /// <summary>The next <paramref name="count"/> connections are held for <paramref name="delay"/> before being passed on.</summary>
    public void DelayNext(int count, TimeSpan delay)
    {
        _delay = delay;
        Volatile.Write(ref _delayNext, count);
        DropConnections();
    }

    public ValueTask DisposeAsync()
    {
        Close();
        return ValueTask.CompletedTask;
    }

    private async Task AcceptAsync(TcpListener listener, CancellationToken stopping)
    {
        while (!stopping.IsCancellationRequested)
        {
            TcpClient client;
            try
            {
                client = await listener.AcceptTcpClientAsync(stopping);
            }
            catch (Exception ex) when (ex is OperationCanceledException or SocketException or ObjectDisposedException)
            {
                return;
            }

            lock (_connections)
            {
                _connections.Add(client.Client);
            }

            _ = ServeAsync(client, stopping);
        }
    }

    private async Task ServeAsync(TcpClient client, CancellationToken stopping)
    {
        var socket = client.Client;
        try
        {
            using (client)
            {
                var stream = client.GetStream();
                if (Interlocked.Decrement(ref _failNext) >= 0)
                {
                    await RefuseAsync(stream, stopping);
                    return;
                }

                if (Interlocked.Decrement(ref _delayNext) >= 0)
                {
                    await Task.Delay(_delay, stopping);
                }

                using var upstream = new TcpClient();
                await upstream.ConnectAsync(_target, stopping);
                var upstreamStream = upstream.GetStream();
                var up = stream.CopyToAsync(upstreamStream, stopping);
                var down = upstreamStream.CopyToAsync(stream, stopping);
                await Task.WhenAny(up, down);
            }
        }
        catch (Exception ex) when (ex is IOException or SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // Cut by a test, or by either side.
        }
        finally
        {
            lock (_connections)
            {
                _connections.Remove(socket);
            }
        }
    }

    /// <summary>Reads the request head (the bucket client's requests here have no body) and answers it with the S3 error.</summary>
    private async Task RefuseAsync(NetworkStream stream, CancellationToken stopping)
    {
        var head = new StringBuilder();
        var buffer = new byte[4096];
        while (!head.ToString().Contains("\r\n\r\n", StringComparison.Ordinal))
        {
            var read = await stream.ReadAsync(buffer, stopping);
            if (read == 0)
            {
                return;
            }

            head.Append(Encoding.ASCII.GetString(buffer, 0, read));
        }

        var body = $"<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{_failCode}</Code><Message>injected by the test</Message></Error>";
        var response = $"HTTP/1.1 {_failStatus} {_failCode}\r\nContent-Type: application/xml\r\nContent-Length: {body.Length}\r\nConnection: close\r\n\r\n{body}";
        await stream.WriteAsync(Encoding.ASCII.GetBytes(response), stopping);
        Interlocked.Increment(ref Refused);
    }
}
