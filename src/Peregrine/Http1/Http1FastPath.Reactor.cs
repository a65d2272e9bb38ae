using System.Buffers;

namespace Peregrine.Http1;

// Answering for a caller that reads the connection itself: the standalone server's cleartext
// reactor (Peregrine.Server, Connections/CleartextReactor), which hands a connection to Kestrel,
// with its ConnectionState, as soon as anything in it is not answered here.
internal sealed partial class Http1FastPath
{
    /// <summary>Whether requests are answered at all (false for <see cref="KestrelFront"/> alone).</summary>
    internal bool Answers => _serves;

    /// <summary>Kestrel's keep-alive timeout, which the reactor applies to the connections it holds.</summary>
    internal TimeSpan KeepAliveTimeout => _keepAliveTimeout;

    /// <summary>Kestrel's request-headers timeout, which the standalone server applies to a new connection's first bytes.</summary>
    internal TimeSpan HeadersTimeout => _headersTimeout;

    /// <summary>
    /// Answers the complete requests in <paramref name="buffer"/>, as a connection's loop does
    /// (<see cref="Process"/>), into <paramref name="connection"/>'s output, which the caller sends.
    /// </summary>
    internal Outcome Answer(ref ReadOnlySequence<byte> buffer, ConnectionState connection, out byte[]? rewritten, out int rewrittenLength, out FileBody? cold)
    {
        var outcome = Process(ref buffer, connection.Output!, https: false, ref connection.First, connection.Warmed, out rewritten, out rewrittenLength, out cold);
        connection.Warmed = false;
        return outcome;
    }
}
