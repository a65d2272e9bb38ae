using System.Buffers;
using System.IO.Pipelines;

namespace Peregrine.Http1;

// The lent connection's transport as Kestrel's HTTP/1.1 connection reads and writes it: the
// lent head and, once handed over, the connection's own input (LentInput); the fast path's
// output, flushed through (LentOutput).
internal sealed partial class KestrelLease
{
    private ReadOnlySequence<byte> Unread => new(_head, _start, _head.Length - _start);

    private ValueTask<ReadResult> Read()
    {
        TaskCompletionSource<bool>? turn;
        ValueTask<ReadResult> read;
        bool over;
        lock (_lock)
        {
            if (_handedOver is { } input)
            {
                return input.ReadAsync();
            }

            if (_cancelRead)
            {
                _cancelRead = false;
                return new ValueTask<ReadResult>(new ReadResult(Unread, isCanceled: true, isCompleted: false));
            }

            if (_start < _head.Length)
            {
                // A head Kestrel read whole and asks more of would never end (the fast path frames
                // heads as Kestrel does, so this is not expected): it gets the end of the input.
                return new ValueTask<ReadResult>(new ReadResult(Unread, isCanceled: false, isCompleted: _examinedAll));
            }

            // Kestrel answered, and reads for its next request: the connection is the fast path's
            // again. Its timers wait with it.
            Volatile.Write(ref _beating, false);
            _answering = false;
            _waitingSince = Environment.TickCount64;
            turn = _turn;
            _turn = null;
            over = _done || _ended;
            if (over)
            {
                read = new ValueTask<ReadResult>(new ReadResult(default, isCanceled: false, isCompleted: true));
            }
            else
            {
                _waiting = new TaskCompletionSource<ReadResult>();
                read = new ValueTask<ReadResult>(_waiting.Task);
            }
        }

        turn?.TrySetResult(!over);
        return read;
    }

    private void Advance(SequencePosition consumed, SequencePosition examined)
    {
        lock (_lock)
        {
            if (_handedOver is { } input)
            {
                input.AdvanceTo(consumed, examined);
                return;
            }

            var unread = Unread;
            var taken = (int)unread.Slice(unread.Start, consumed).Length;
            _examinedAll = taken < unread.Length && unread.Slice(unread.Start, examined).Length == unread.Length;
            _start += taken;
            if (_start != _head.Length || !_answering || _beating)
            {
                return;
            }

            _beating = true;
        }

        // The head is read whole: Kestrel has cancelled its head timer, so a beat now fires
        // nothing and brings its clock up to date, late by however long it waited. Its
        // keep-alive timer, set from that clock when it reads for its next request, then runs
        // from the end of this one.
        Beat(force: true);
    }

    private bool TryRead(out ReadResult result)
    {
        lock (_lock)
        {
            if (_handedOver is { } input)
            {
                return input.TryRead(out result);
            }

            if (_start < _head.Length || _cancelRead)
            {
                result = new ReadResult(Unread, _cancelRead, isCompleted: false);
                _cancelRead = false;
                return true;
            }

            result = default;
            return false;
        }
    }

    private void CancelRead()
    {
        TaskCompletionSource<ReadResult>? waiting;
        lock (_lock)
        {
            if (_handedOver is { } input)
            {
                input.CancelPendingRead();
                return;
            }

            waiting = _waiting;
            _waiting = null;
            _cancelRead = waiting is null;
        }

        if (waiting is not null)
        {
            // Called from Kestrel's heartbeat or its shutdown: Kestrel's connection goes on from
            // the thread pool, not on that thread.
            ThreadPool.UnsafeQueueUserWorkItem(static waiting => waiting.TrySetResult(new ReadResult(default, isCanceled: true, isCompleted: false)), waiting, preferLocal: false);
        }
    }

    private void InputCompleted()
    {
        PipeReader? input;
        lock (_lock)
        {
            input = _handedOver;
        }

        // After a hand-over the input is Kestrel's, as after any hand-off.
        input?.Complete();
    }

    private void OutputCompleted()
    {
        lock (_lock)
        {
            _done = true;
        }
    }

    /// <summary>A response written: Kestrel's timers run (for a head it refused before reading it whole).</summary>
    private void Writing()
    {
        if (!Volatile.Read(ref _beating) && Volatile.Read(ref _answering))
        {
            Volatile.Write(ref _beating, true);
        }
    }

    private sealed class LentInput(KestrelLease lease) : PipeReader
    {
        public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default) => lease.Read();

        public override bool TryRead(out ReadResult result) => lease.TryRead(out result);

        public override void AdvanceTo(SequencePosition consumed) => lease.Advance(consumed, consumed);

        public override void AdvanceTo(SequencePosition consumed, SequencePosition examined) => lease.Advance(consumed, examined);

        public override void CancelPendingRead() => lease.CancelRead();

        public override void Complete(Exception? exception = null) => lease.InputCompleted();
    }

    /// <summary>The fast path's output, written by Kestrel; completing it ends the lease, not the connection's output.</summary>
    private sealed class LentOutput(KestrelLease lease, PipeWriter output) : PipeWriter
    {
        private readonly PipeWriter _lent = output;

        /// <summary>Where Kestrel's writes go: the fast path's output, and after a hand-over the transport's own.</summary>
        public PipeWriter Target { get; set; } = output;

        public override bool CanGetUnflushedBytes => Target.CanGetUnflushedBytes;

        public override long UnflushedBytes => Target.UnflushedBytes;

        public override void Advance(int bytes)
        {
            lease.Writing();
            Target.Advance(bytes);
        }

        public override Memory<byte> GetMemory(int sizeHint = 0) => Target.GetMemory(sizeHint);

        public override Span<byte> GetSpan(int sizeHint = 0) => Target.GetSpan(sizeHint);

        public override ValueTask<FlushResult> FlushAsync(CancellationToken cancellationToken = default) => Target.FlushAsync(cancellationToken);

        public override ValueTask<FlushResult> WriteAsync(ReadOnlyMemory<byte> source, CancellationToken cancellationToken = default)
        {
            lease.Writing();
            return Target.WriteAsync(source, cancellationToken);
        }

        public override void CancelPendingFlush() => Target.CancelPendingFlush();

        /// <summary>Ends the lease; after a hand-over the connection's output is Kestrel's, as after any hand-off, and completes.</summary>
        public override void Complete(Exception? exception = null)
        {
            lease.OutputCompleted();
            if (!ReferenceEquals(Target, _lent))
            {
                Target.Complete(exception);
            }
        }
    }
}
