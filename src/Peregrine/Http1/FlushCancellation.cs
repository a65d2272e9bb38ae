namespace Peregrine.Http1;

/// <summary>
/// The cancellation of a writer's flush that waits on the client (<see cref="TlsRecordWriter"/>,
/// <see cref="SocketOutput"/>): one token source per connection, reset and used again for each
/// flush that has to wait, and cancelled only while such a flush is under way, so that a
/// cancellation meant for one flush never reaches the next.
/// </summary>
internal sealed class FlushCancellation : IDisposable
{
    private CancellationTokenSource? _source;
    private volatile bool _waiting;

    /// <summary>The caller's token when it can be cancelled, else this connection's own, reset.</summary>
    public CancellationToken Token(CancellationToken cancellationToken)
    {
        if (cancellationToken.CanBeCanceled)
        {
            return cancellationToken;
        }

        if (_source is null || !_source.TryReset())
        {
            _source?.Dispose();
            _source = new CancellationTokenSource();
        }

        return _source.Token;
    }

    /// <summary>Marks the start (true) and the end (false) of a flush that waits.</summary>
    public bool Waiting
    {
        set => _waiting = value;
    }

    /// <summary>Cancels the flush that waits; with none waiting there is nothing to cancel.</summary>
    public void Cancel()
    {
        if (_waiting)
        {
            _source?.Cancel();
        }
    }

    public void Dispose()
    {
        _source?.Dispose();
        _source = null;
    }
}
