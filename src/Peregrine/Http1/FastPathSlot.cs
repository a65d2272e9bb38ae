namespace Peregrine.Http1;

/// <summary>
/// Where a listener finds the fast path that an endpoint's connection middleware runs
/// (<c>UsePeregrineFastPath</c>), made once for both: the standalone server's cleartext reactor
/// answers from it before Kestrel sees a connection.
/// </summary>
internal sealed class FastPathSlot
{
    private Func<Http1FastPath?>? _get;

    /// <summary>The endpoint's fast path; null before the endpoint is configured, or when it has none (named instances only).</summary>
    public Http1FastPath? Get() => Volatile.Read(ref _get)?.Invoke();

    internal void Bind(Func<Http1FastPath?> get) => Volatile.Write(ref _get, get);
}
