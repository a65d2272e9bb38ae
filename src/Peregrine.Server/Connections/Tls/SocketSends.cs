using System.Net.Sockets;
using System.Runtime.CompilerServices;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// The send under a TLS stream, for both ways the server ends TLS (<see cref="SocketStream"/>
/// below its own, <see cref="EncryptedOutput"/> below Kestrel's): every byte of a buffer goes to
/// the socket from the caller's memory, which the caller reuses only once the send has
/// completed. A send the socket takes whole at once completes synchronously, with no state
/// machine; a partial one goes on from where it stopped.
/// </summary>
internal static class SocketSends
{
    /// <summary>
    /// Sends all of <paramref name="source"/>; completes with null once the kernel has taken it,
    /// or with the failure (the socket reset, shut or closed), which the caller turns into an
    /// abort of its connection.
    /// </summary>
    public static ValueTask<Exception?> SendAllAsync(Socket socket, ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        ValueTask<int> first;
        try
        {
            first = socket.SendAsync(source, SocketFlags.None, cancellationToken);
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            return new ValueTask<Exception?>(ex);
        }

        if (first.IsCompletedSuccessfully && first.Result == source.Length)
        {
            return default;
        }

        return SendRestAsync(socket, first, source, cancellationToken);
    }

    /// <summary>Awaits <paramref name="first"/>, a send of <paramref name="source"/> under way, and sends what it left.</summary>
    [AsyncMethodBuilder(typeof(PoolingAsyncValueTaskMethodBuilder<>))]
    private static async ValueTask<Exception?> SendRestAsync(Socket socket, ValueTask<int> first, ReadOnlyMemory<byte> source, CancellationToken cancellationToken)
    {
        try
        {
            var sent = await first;
            while (sent < source.Length)
            {
                sent += await socket.SendAsync(source[sent..], SocketFlags.None, cancellationToken);
            }

            return null;
        }
        catch (Exception ex) when (ex is SocketException or ObjectDisposedException)
        {
            return ex;
        }
    }
}
