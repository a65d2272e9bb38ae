using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;
using Peregrine.Http1;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Connections;

// The connections given to Kestrel: those the reactor hands on, with their ConnectionState,
// and those sorted here (TLS for Kestrel, h2c, the rest), each made a Kestrel connection.
internal sealed partial class ClientHelloListener
{
    /// <summary>A connection the reactor hands on: the bytes it read and did not answer are read first, and the fast path takes up where it stopped.</summary>
    private void HandOn(Socket accepted, byte[]? prefix, ConnectionState? state, bool http2)
    {
        if (Create(accepted, http2) is not { } connection)
        {
            state?.Output?.Complete();
            return;
        }

        if (prefix is not null)
        {
            connection.Transport = new PrefixedTransport(prefix, connection.Transport);
        }

        if (state is not null)
        {
            connection.Features.Set(state);
        }

        Ready(connection);
    }

    private void HandOn(Socket accepted, ClientOffer offer)
    {
        if (Create(accepted, offer == ClientOffer.Http2) is not { } connection)
        {
            return;
        }

        // HTTP/1.1 over Kestrel's TLS (--kestrel-tls): the encrypted output goes to the socket
        // without Kestrel's output pipe. HTTP/2 keeps the pipe, where the records of many
        // streams gather into one send (measured: h2 over TLS at 3.5 KB lost half its
        // requests/s when each record was sent alone); so does a connection whose ClientHello
        // was not read (Kestrel decides what it is).
        if (offer == ClientOffer.Http11)
        {
            connection.Transport = EncryptedOutput.Install(connection, accepted);
        }

        Ready(connection);
    }

    /// <summary>Kestrel's connection for <paramref name="accepted"/>, with the scheduling HTTP/2 or the rest gets; null (the socket closed) when the listener stopped meanwhile or the client is gone.</summary>
    private ConnectionContext? Create(Socket accepted, bool http2)
    {
        ConnectionContext connection;
        try
        {
            connection = (http2 ? _queued : _inline).Create(accepted);
        }
        catch (Exception ex) when (ex is ObjectDisposedException or SocketException)
        {
            accepted.Dispose();
            return null;
        }

        Interlocked.Increment(ref http2 ? ref _http2 : ref _other);
        return connection;
    }

    private void Ready(ConnectionContext connection)
    {
        if (!_ready.Writer.TryWrite(connection))
        {
            // Unbound meanwhile: Kestrel accepts no more.
            connection.Abort();
            _ = connection.DisposeAsync().AsTask();
        }
    }
}
