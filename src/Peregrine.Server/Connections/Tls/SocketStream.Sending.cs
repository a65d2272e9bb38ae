using System.Net.Sockets;
using System.Runtime.CompilerServices;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Server.Connections.Tls;

// The stream's output: writes handed to the socket, a failed send, and the shut that ends
// the connection.
internal sealed partial class SocketStream
{
    public override ValueTask WriteAsync(ReadOnlyMemory<byte> buffer, CancellationToken cancellationToken = default)
    {
        if (_sendFailed || _shut)
        {
            // As Kestrel's pipe once its send loop has failed: the write goes nowhere, and the
            // abort that came with the failure ends the connection.
            return ValueTask.CompletedTask;
        }

        var sending = SocketSends.SendAllAsync(Socket, buffer, cancellationToken);
        if (!sending.IsCompletedSuccessfully)
        {
            return SentAsync(sending);
        }

        if (sending.Result is { } failure)
        {
            SendFailed(failure);
        }

        return ValueTask.CompletedTask;
    }

    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder))]
    private async ValueTask SentAsync(ValueTask<Exception?> sending)
    {
        if (await sending is { } failure)
        {
            SendFailed(failure);
        }
    }

    private void SendFailed(Exception ex)
    {
        _sendFailed = true;
        if (!_shut)
        {
            Connection?.Abort(new ConnectionAbortedException("The connection failed while sending.", ex));
        }
    }

    /// <summary>Shuts the socket down both ways and closes it, once; a read under way or to come fails with <paramref name="reason"/>.</summary>
    internal void Shut(ConnectionAbortedException? reason)
    {
        lock (_lock)
        {
            if (_shut)
            {
                return;
            }

            _shutReason = reason;
            _shut = true;
            ReturnStash();
        }

        try
        {
            Socket.Shutdown(SocketShutdown.Both);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            // Already reset by the client.
        }

        Socket.Dispose();
    }
}
