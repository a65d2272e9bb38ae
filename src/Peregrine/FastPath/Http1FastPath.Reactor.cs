using System.Buffers;
using Peregrine.Transport;

namespace Peregrine.FastPath;

// Answering for a caller that reads the connection itself: the standalone server's cleartext
// reactor (Peregrine.Server, Tls/CleartextReactor), which hands a connection to Kestrel, with
// a ReactorCarry, as soon as anything in it is not answered here.
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
    /// (<see cref="Process"/>), into <paramref name="output"/>, which the caller sends.
    /// </summary>
    internal Outcome Answer(ref ReadOnlySequence<byte> buffer, SocketOutput output, ref bool first, bool warmed, out byte[]? rewritten, out int rewrittenLength, out FileBody? cold)
        => Process(ref buffer, output, https: false, ref first, warmed, out rewritten, out rewrittenLength, out cold);
}

/// <summary>
/// What a connection brings when a reactor that answered its first requests hands it to Kestrel:
/// whether any request was answered (<see cref="KestrelFront"/> looks at the first head only),
/// output the socket had no room for yet, whether the connection is to close once that output is
/// sent, and whether the next head is Kestrel's (the fast path did not answer it). Set as a
/// connection feature; the fast path takes up where the reactor stopped.
/// </summary>
internal sealed class ReactorCarry(bool first, SocketOutput? output, bool closing, bool kestrels)
{
    public bool First { get; } = first;

    public SocketOutput? Output { get; } = output;

    public bool Closing { get; } = closing;

    /// <summary>The fast path handed the next head on: Kestrel reads it, once the output is sent, as after any hand-off.</summary>
    public bool Kestrels { get; } = kestrels;
}
