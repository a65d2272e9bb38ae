using System.Buffers;
using System.IO.Pipelines;

namespace Peregrine.Http1;

/// <summary>
/// The connection's transport with bytes the fast path already consumed (a head copied out of
/// the pipe) put back in front of its input, for Kestrel to read from the start.
/// </summary>
internal sealed class PrefixedTransport(byte[] prefix, IDuplexPipe inner) : IDuplexPipe
{
    public PipeReader Input { get; } = new PrefixedReader(prefix, inner.Input);

    public PipeWriter Output => inner.Output;

    private sealed class PrefixedReader(byte[] prefix, PipeReader inner) : PipeReader
    {
        private byte[]? _prefix = prefix;
        private ReadOnlySequence<byte> _innerBuffer;
        private ReadOnlySequence<byte> _joined;
        private bool _innerRead;

        // Set once what was offered has all been examined: only new bytes from the pipe can then
        // move the reader on. Until then the prefix is offered with whatever the pipe holds now,
        // without waiting for more (the prefix may be a whole head, with nothing after it yet).
        private bool _waitForInner;

        public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
        {
            if (_prefix is null)
            {
                return inner.ReadAsync(cancellationToken);
            }

            return !_waitForInner && TryRead(out var result) ? new ValueTask<ReadResult>(result) : ReadJoinedAsync(cancellationToken);
        }

        private async ValueTask<ReadResult> ReadJoinedAsync(CancellationToken cancellationToken)
        {
            var result = await inner.ReadAsync(cancellationToken);
            return Join(result);
        }

        public override bool TryRead(out ReadResult result)
        {
            if (_prefix is null)
            {
                return inner.TryRead(out result);
            }

            if (inner.TryRead(out var innerResult))
            {
                result = Join(innerResult);
                return true;
            }

            _innerRead = false;
            _innerBuffer = default;
            _joined = new ReadOnlySequence<byte>(_prefix);
            result = new ReadResult(_joined, false, false);
            return true;
        }

        private ReadResult Join(ReadResult result)
        {
            _innerRead = true;
            _innerBuffer = result.Buffer;
            var joined = new byte[_prefix!.Length + result.Buffer.Length];
            _prefix.CopyTo(joined, 0);
            result.Buffer.CopyTo(joined.AsSpan(_prefix.Length));
            _joined = new ReadOnlySequence<byte>(joined);
            return new ReadResult(_joined, result.IsCanceled, result.IsCompleted);
        }

        public override void AdvanceTo(SequencePosition consumed) => AdvanceTo(consumed, consumed);

        public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
        {
            if (_prefix is null)
            {
                inner.AdvanceTo(consumed, examined);
                return;
            }

            var c = _joined.Slice(_joined.Start, consumed).Length;
            var e = Math.Max(c, _joined.Slice(_joined.Start, examined).Length);
            var p = _prefix.Length;
            if (_innerRead)
            {
                inner.AdvanceTo(_innerBuffer.GetPosition(Math.Max(0, c - p)), _innerBuffer.GetPosition(Math.Max(0, e - p)));
            }

            _waitForInner = e >= _joined.Length;
            _prefix = c >= p ? null : _prefix[(int)c..];
            _innerBuffer = default;
            _joined = default;
        }

        public override void CancelPendingRead() => inner.CancelPendingRead();

        public override void Complete(Exception? exception = null) => inner.Complete(exception);

        public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);
    }
}
