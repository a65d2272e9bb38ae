namespace Peregrine.Http1;

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
