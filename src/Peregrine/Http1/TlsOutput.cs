using System.IO.Pipelines;
using System.Net.Security;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Http1;

/// <summary>
/// TLS output sizing for one connection: while installed, everything written to the connection
/// (the fast path's responses and Kestrel's, HTTP/2 included) reaches the <see cref="SslStream"/>
/// through one <see cref="TlsRecordWriter"/>, in writes of 32 KiB rather than Kestrel's 4 KiB
/// blocks (docs/performance.md, "TLS output in 32 KiB writes"). Installed by the fast path after
/// the handshake; switched off with <c>UsePeregrineFastPath(sizeTlsOutput: false, …)</c> or the
/// server's <c>--no-tls-sizing</c> (docs/configuration.md).
/// </summary>
internal readonly struct TlsOutput
{
    private readonly IDuplexPipe _original;

    private TlsOutput(IDuplexPipe original, TlsRecordWriter writer)
    {
        _original = original;
        Writer = writer;
    }

    /// <summary>The connection's output while installed.</summary>
    public TlsRecordWriter Writer { get; }

    /// <summary>Makes <paramref name="stream"/>'s writer the connection's output, for the connection's life.</summary>
    public static TlsOutput Install(ConnectionContext connection, SslStream stream)
    {
        var original = connection.Transport;
        var writer = new TlsRecordWriter(stream);
        connection.Transport = new DuplexPipe(original.Input, writer);
        return new TlsOutput(original, writer);
    }

    /// <summary>Gives the connection its own transport back and returns the writer's buffers; the stream stays open.</summary>
    public void Remove(ConnectionContext connection)
    {
        connection.Transport = _original;
        Writer.Complete();
    }
}
