using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;

namespace Peregrine.Http1;

/// <summary>
/// Kestrel's HTTP/1.1 connection for the requests the fast path does not answer on a connection
/// it keeps: a 404, a range, a page of the application. Until this, the first such request gave
/// Kestrel the rest of the connection, and every later request on it, a file the fast path holds
/// included, went through Kestrel's pipeline: behind a load balancer, whose connections live for
/// hours, or in a browser that asks for a missing icon, for good.
/// </summary>
/// <remarks>
/// <para>
/// Kestrel is started once, on this context, the first time a request is lent
/// (<see cref="LendAsync"/>), and reads its input from here: the lent head, and nothing after it.
/// Once it has answered and flushed, it reads for its next request; that read waits here while
/// the fast path reads the connection on, until the next lent head or the connection's end
/// (<see cref="EndAsync"/>), when the read completes and Kestrel ends as after a client's FIN.
/// Only heads Kestrel frames exactly as the fast path does are lent
/// (<see cref="RequestHead.IsLendable"/>), so each read of Kestrel's for a next request falls
/// where the fast path's would. One Kestrel connection serves every lent request, as it would
/// have served them all: one request count, so one series of trace identifiers.
/// </para>
/// <para>
/// Kestrel's responses go to the fast path's own output, which the fast path has flushed before
/// each lent request, so the two never interleave; after a hand-over, to the transport's output,
/// as on any connection Kestrel has whole. Kestrel's output completing, or Kestrel aborting the
/// connection, ends the lease: the connection closes as Kestrel wanted.
/// </para>
/// <para>
/// Kestrel's timeouts run on the connection's once-a-second heartbeat, which Kestrel's
/// connection takes through <see cref="IConnectionHeartbeatFeature"/>; here the beats reach it
/// only while it has a request. While it waits for one, its keep-alive timer, which it set
/// before that read, would otherwise close a connection the fast path is serving; the fast path
/// applies the keep-alive timeout itself. A lent head is read whole in the call that gets it, and
/// Kestrel cancels its head timer at its end: a beat given then fires nothing and brings its
/// clock, late by the wait, up to date (its write-rate timer allows for a late clock), so that
/// the keep-alive timer it sets after answering runs from then. A request the fast path cannot
/// lend after one it lent gives Kestrel the rest of the connection (<see cref="HandOverAsync"/>),
/// its beats from then on.
/// </para>
/// <para>
/// Kestrel learns that the client closed the connection (<see cref="ConnectionClosed"/>) while
/// it has a request, as it would; while it waits, the fast path answers what the client sent
/// before its FIN, as it does on a connection it has never lent.
/// </para>
/// </remarks>
internal sealed partial class KestrelLease : ConnectionContext, IConnectionHeartbeatFeature
{
    // Kestrel's keep-alive timer is set from its clock, which a beat updates once a second: a
    // hand-over this close to the timer's end is taken as after it.
    private static readonly TimeSpan KeepAliveMargin = TimeSpan.FromSeconds(3);

    private readonly ConnectionContext _connection;
    private readonly ConnectionDelegate _next;
    private readonly TimeSpan _keepAliveTimeout;
    private readonly FeatureCollection _features;
    private readonly CancellationTokenSource _closed = new();
    private readonly CancellationTokenRegistration _clientClosed;
    private readonly Lock _lock = new();
    private readonly LentOutput _output;

    private Task? _kestrel;

    // The head lent, from where Kestrel has read it up to.
    private byte[] _head = [];
    private int _start;

    // Kestrel examined all it was given and read again: it wants more than the head.
    private bool _examinedAll;

    // Kestrel's read for its next request, waiting for the next lent head.
    private TaskCompletionSource<ReadResult>? _waiting;

    // A CancelPendingRead with no read waiting: the next read returns cancelled.
    private bool _cancelRead;

    // The fast path, waiting for Kestrel to answer the head it lent: true when Kestrel reads for
    // its next request, false when it ends instead.
    private TaskCompletionSource<bool>? _turn;

    // Kestrel has a request (from a lent head until its read for the next).
    private bool _answering;

    // Set when Kestrel ended, completed its output or aborted the connection: nothing more is lent.
    private bool _done;

    // The fast path ended: Kestrel's read for a next request completes.
    private bool _ended;
    private bool _clientGone;
    private long _waitingSince;

    // Kestrel's reads after a hand-over: the connection's input.
    private PipeReader? _handedOver;

    // The heartbeat callback of Kestrel's connection, and whether beats reach it.
    private Action<object>? _beat;
    private object? _beatState;
    private bool _beating;
    private bool _subscribed;

    public KestrelLease(ConnectionContext connection, PipeWriter output, ConnectionDelegate next, TimeSpan keepAliveTimeout)
    {
        _connection = connection;
        _next = next;
        _keepAliveTimeout = keepAliveTimeout;
        _features = new FeatureCollection(connection.Features);
        _features.Set<IConnectionHeartbeatFeature>(this);
        _output = new LentOutput(this, output);
        Transport = new DuplexPipe(new LentInput(this), _output);
        _clientClosed = connection.ConnectionClosed.UnsafeRegister(static state => ((KestrelLease)state!).ClientClosed(), this);
    }

    public override string ConnectionId
    {
        get => _connection.ConnectionId;
        set => _connection.ConnectionId = value;
    }

    public override IFeatureCollection Features => _features;

    public override IDictionary<object, object?> Items
    {
        get => _connection.Items;
        set => _connection.Items = value;
    }

    public override IDuplexPipe Transport { get; set; }

    public override CancellationToken ConnectionClosed
    {
        get => _closed.Token;
        set { }
    }

    public override EndPoint? LocalEndPoint
    {
        get => _connection.LocalEndPoint;
        set => _connection.LocalEndPoint = value;
    }

    public override EndPoint? RemoteEndPoint
    {
        get => _connection.RemoteEndPoint;
        set => _connection.RemoteEndPoint = value;
    }

    public override void Abort(ConnectionAbortedException abortReason)
    {
        lock (_lock)
        {
            _done = true;
        }

        _connection.Abort(abortReason);
    }

    public override ValueTask DisposeAsync() => default;

    /// <summary>
    /// Gives Kestrel <paramref name="head"/>, a whole request head with no body that the fast
    /// path has consumed from the connection and flushed everything before. True once Kestrel has
    /// answered it and waits for its next request; false when it ended the connection instead.
    /// </summary>
    public Task<bool> LendAsync(byte[] head)
    {
        // Continuations run inline, in both directions: Kestrel answers the lent head on the
        // fast path's thread, within this call, and the fast path reads on within Kestrel's read
        // for its next request, with no thread-pool hop either way (measured: with a hop each way, a connection
        // of nothing but 404s cost twice the CPU a request that Kestrel alone did).
        var turn = new TaskCompletionSource<bool>();
        TaskCompletionSource<ReadResult>? waiting;
        bool start, closed;
        lock (_lock)
        {
            if (_done || _ended || _handedOver is not null)
            {
                return Task.FromResult(false);
            }

            start = _kestrel is null;
            waiting = _waiting;
            if (!start && waiting is null)
            {
                // Kestrel is neither waiting nor yet to start: it has ended.
                return Task.FromResult(false);
            }

            _waiting = null;
            _head = head;
            _start = 0;
            _examinedAll = false;
            _answering = true;
            _turn = turn;
            closed = _clientGone;
        }

        if (closed)
        {
            // The client closed the connection while Kestrel waited: Kestrel learns it now, as it
            // would have when it came.
            Cancel();
        }

        if (start)
        {
            _kestrel = RunAsync();
        }
        else
        {
            waiting!.TrySetResult(new ReadResult(new ReadOnlySequence<byte>(head), isCanceled: false, isCompleted: false));
        }

        return turn.Task;
    }

    /// <summary>
    /// Gives Kestrel the rest of the connection: <paramref name="prefix"/> (bytes the fast path
    /// consumed) when there is one, then the connection's input, for a request that cannot be
    /// lent after one that was. False, with nothing done, when Kestrel's connection cannot take
    /// it: it has ended, or its keep-alive timer ran out while it waited (Kestrel would have
    /// closed it as idle; its clock cannot be brought up to date without that timer firing). The
    /// caller then ends the lease and starts Kestrel afresh. True once Kestrel has ended.
    /// </summary>
    public async Task<bool> HandOverAsync(byte[]? prefix)
    {
        TaskCompletionSource<ReadResult>? waiting;
        lock (_lock)
        {
            var waited = TimeSpan.FromMilliseconds(Environment.TickCount64 - _waitingSince);
            if (_done || _ended || _waiting is null || waited >= _keepAliveTimeout - KeepAliveMargin)
            {
                return false;
            }

            _handedOver = prefix is null ? _connection.Transport.Input : new PrefixedTransport(prefix, _connection.Transport).Input;

            // From here Kestrel writes where it writes on any connection it has whole (the
            // transport's pipe over cleartext, the same writer over TLS): the fast path's output
            // has sent everything, and Kestrel, waiting, writes nothing until it reads.
            _output.Target = _connection.Transport.Output;
            waiting = _waiting;
            _waiting = null;
            _answering = true;
        }

        // Its keep-alive timer has not run out: a beat now brings its clock up to date without
        // firing it, and from here it times the connection as its own.
        Beat(force: true);
        Volatile.Write(ref _beating, true);
        if (Volatile.Read(ref _clientGone))
        {
            Cancel();
        }

        try
        {
            waiting.TrySetResult(await _handedOver.ReadAsync());
        }
        catch (Exception e)
        {
            waiting.TrySetException(e);
        }

        await _kestrel!;
        return true;
    }

    /// <summary>The fast path is done with the connection: Kestrel's waiting read completes, and Kestrel ends.</summary>
    public async Task EndAsync()
    {
        TaskCompletionSource<ReadResult>? waiting;
        lock (_lock)
        {
            _ended = true;
            waiting = _waiting;
            _waiting = null;
        }

        waiting?.TrySetResult(new ReadResult(default, isCanceled: false, isCompleted: true));
        if (_kestrel is { } kestrel)
        {
            await kestrel;
        }

        _clientClosed.Dispose();
        _closed.Dispose();
    }

    void IConnectionHeartbeatFeature.OnHeartbeat(Action<object> action, object state)
    {
        lock (_lock)
        {
            if (_beat is not null)
            {
                // One Kestrel connection registers once.
                throw new InvalidOperationException("A lent connection takes one heartbeat callback.");
            }

            _beat = action;
            _beatState = state;
            if (!_subscribed)
            {
                _subscribed = true;
                _connection.Features.Get<IConnectionHeartbeatFeature>()?.OnHeartbeat(static state => ((KestrelLease)state).Beat(force: false), this);
            }
        }
    }

    private void Beat(bool force)
    {
        if ((force || Volatile.Read(ref _beating)) && _beat is { } beat)
        {
            beat(_beatState!);
        }
    }

    private async Task RunAsync()
    {
        try
        {
            await _next(this);
        }
        catch
        {
            // Kestrel's connection logs its own failures; the lease ends all the same.
        }
        finally
        {
            TaskCompletionSource<bool>? turn;
            lock (_lock)
            {
                _done = true;
                turn = _turn;
                _turn = null;
            }

            turn?.TrySetResult(false);
        }
    }

    private void ClientClosed()
    {
        bool now;
        lock (_lock)
        {
            _clientGone = true;
            now = _answering;
        }

        if (now)
        {
            Cancel();
        }
    }

    private void Cancel()
    {
        try
        {
            _closed.Cancel();
        }
        catch (ObjectDisposedException)
        {
        }
    }
}
