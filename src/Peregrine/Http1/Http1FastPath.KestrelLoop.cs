using System.Buffers;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;

namespace Peregrine.Http1;

// The fast path's loop on Kestrel's transport: a shell that reads, answers, flushes and carries
// out the step the connection's ConnectionState decides (lend, park, hand on, close), for a
// connection Kestrel accepted or one the standalone server's reactor handed on.
internal sealed partial class Http1FastPath
{
    private async Task ServeAsync(ConnectionContext connection, PipeWriter output, bool https, ConnectionDelegate next, ConnectionState? carried = null)
    {
        var input = connection.Transport.Input;
        using var watched = FastPathHeartbeat.Watch(input, output);
        var closing = connection.Features.Get<IConnectionLifetimeNotificationFeature>()?.ConnectionClosedRequested ?? default;
        using var shutdown = closing.UnsafeRegister(static state => ((PipeReader)state!).CancelPendingRead(), input);
        var state = carried ?? new ConnectionState(output: null, inReactor: false);
        var headStarted = 0L;
        byte[]? rewritten;
        int rewrittenLength;
        FileBody? cold;
        try
        {
            if (carried is not null)
            {
                // Where the reactor stopped: what it answered goes first, under the send deadline
                // of any flush; then the connection closes, or is Kestrel's, or is read on here
                // (a head the reactor would lend waits in the input, and is lent from here).
                var sent = await FlushAsync(output, watched);
                if (sent.IsCanceled)
                {
                    AbortStalled(connection);
                    return;
                }

                switch (state.Next(sent.IsCompleted ? SocketOutput.Progress.Failed : SocketOutput.Progress.Done))
                {
                    case ConnectionStep.Close:
                        return;
                    case ConnectionStep.HandOn:
                        watched.Dispose();
                        await next(connection);
                        return;
                }
            }

            while (true)
            {
                // Idle between requests up to the keep-alive timeout; a head that has begun
                // must be complete within the request-headers timeout of its first byte.
                watched.Arm(headStarted == 0 ? _keepAliveTimeout : _headersTimeout - TimeSpan.FromMilliseconds(Environment.TickCount64 - headStarted));
                var result = await input.ReadAsync();
                if (result.IsCanceled)
                {
                    if (closing.IsCancellationRequested || Environment.TickCount64 > Volatile.Read(ref watched.Deadline))
                    {
                        // Timed out, or the server is shutting down: close, as Kestrel would.
                        // A head that began and did not finish in time gets Kestrel's 408 first.
                        if (headStarted != 0 && !closing.IsCancellationRequested)
                        {
                            WriteRequestTimeout(output);
                            await FlushAsync(output, watched);
                        }

                        return;
                    }

                    // A sweep that raced with the last request's re-arming: read on.
                    input.AdvanceTo(result.Buffer.Start, result.Buffer.Start);
                    continue;
                }

                var buffer = result.Buffer;
                Outcome outcome;
                bool answered;

                // The head began in an earlier read and was copied out (below), and is not
                // answered yet: it lies in the copy and, past the copy, in `buffer`.
                var inCopy = false;
                var take = 0;
                ReadOnlySequence<byte> work = default;
                if (state.Stash is null)
                {
                    outcome = Process(ref buffer, output, https, ref state.First, state.Warmed, out rewritten, out rewrittenLength, out cold);
                    answered = !buffer.Start.Equals(result.Buffer.Start);
                }
                else
                {
                    // Framed joined to what came since, up to as far as a head may run. (A head
                    // that came in pieces is not waited for: should its body be cold, it is
                    // handed on.)
                    take = (int)Math.Min(buffer.Length, _headLimits.Head);
                    work = state.Join(buffer, take);
                    outcome = Process(ref work, output, https, ref state.First, warmed: true, out rewritten, out rewrittenLength, out cold);
                    var done = state.Stashed + take - (int)work.Length;
                    answered = done != 0;
                    if (answered)
                    {
                        // The copied head was answered (it ends past the copy): the rest lies in the pipe.
                        buffer = buffer.Slice(done - state.Stashed);
                        state.Unkeep();
                        if (outcome == Outcome.NeedMore && take < result.Buffer.Length)
                        {
                            // Framed only up to `take`: read the rest again.
                            outcome = Outcome.Flush;
                        }
                    }
                    else
                    {
                        inCopy = true;
                    }
                }

                state.Warmed = false;
                if (outcome == Outcome.NeedMore && result.IsCompleted && (inCopy || !buffer.IsEmpty))
                {
                    // Ended by the client before it was complete: Kestrel's 400, after what was
                    // answered before it.
                    input.AdvanceTo(buffer.End);
                    await RefuseEndedHeadAsync(output, watched);
                    return;
                }

                // What was answered goes before anything else happens, under the send deadline
                // of any flush.
                var flush = await FlushAsync(output, watched);
                if (flush.IsCanceled)
                {
                    AbortStalled(connection);
                    return;
                }

                var progress = flush.IsCompleted ? SocketOutput.Progress.Failed : SocketOutput.Progress.Done;
                var step = state.Next(outcome, progress, answered, behind: inCopy || !buffer.IsEmpty);
                switch (step)
                {
                    case ConnectionStep.HandOn:
                    {
                        // Nothing of this request is consumed: Kestrel reads it from the start and
                        // answers it (a 431 for a head too large, say) and the rest of the
                        // connection. A head rewritten ahead of Kestrel is consumed here, and
                        // Kestrel reads the rewritten one in its place; one rewritten from the
                        // copy ends past the copy (the copy was incomplete).
                        var prefix = rewritten;
                        var consumed = rewritten is null ? buffer.Start : buffer.GetPosition(rewrittenLength - (inCopy ? state.Stashed : 0));
                        if (inCopy && rewritten is null)
                        {
                            prefix = state.Stash.AsSpan(0, state.Stashed).ToArray();
                        }

                        input.AdvanceTo(consumed, consumed);
                        watched.Dispose();
                        await HandOnAsync(connection, next, state.Lease, prefix);
                        return;
                    }

                    case ConnectionStep.Lend:
                    {
                        // Kestrel answers this one; the connection is read on from the end of its
                        // head once it has.
                        byte[] lent;
                        if (inCopy)
                        {
                            // The copy and the head's rest in the pipe.
                            lent = work.Slice(0, rewrittenLength).ToArray();
                            buffer = buffer.Slice(rewrittenLength - state.Stashed);
                            state.Unkeep();
                        }
                        else
                        {
                            lent = buffer.Slice(0, rewrittenLength).ToArray();
                            buffer = buffer.Slice(rewrittenLength);
                        }

                        input.AdvanceTo(buffer.Start, buffer.Start);
                        state.Lease ??= new KestrelLease(connection, output, next, _keepAliveTimeout);

                        // Kestrel times the request itself.
                        watched.Disarm();
                        if (!await state.Lease.LendAsync(lent))
                        {
                            return;
                        }

                        headStarted = 0;
                        continue;
                    }

                    case ConnectionStep.Park:
                        // The answered requests are consumed and sent; the next is read again once
                        // its body's pages are in the page cache, read by a thread of the pool, so
                        // that this connection stays the fast path's.
                        input.AdvanceTo(buffer.Start);
                        await cold!.WarmAsync();
                        state.Warmed = true;
                        continue;

                    case ConnectionStep.Close:
                        // Closing, or the client is gone.
                        input.AdvanceTo(buffer.End);
                        return;
                }

                if (inCopy)
                {
                    // Still incomplete: keep the copy, release the pipe's block.
                    state.Stashed += take;
                    input.AdvanceTo(buffer.End);
                    continue;
                }

                // A head left incomplete starts its headers timeout now if requests were answered
                // before it (Kestrel times each request's head from its own start).
                headStarted = buffer.IsEmpty ? 0 : answered || headStarted == 0 ? Environment.TickCount64 : headStarted;
                if (step == ConnectionStep.Answer)
                {
                    // More requests wait in the buffer: consume the ones answered only, so that
                    // the next read returns the rest without waiting for new bytes.
                    input.AdvanceTo(buffer.Start);
                    continue;
                }

                // ConnectionStep.Read.
                if (result.IsCompleted)
                {
                    return;
                }

                if (!answered && !buffer.IsEmpty)
                {
                    // A head begun and not finished, alone in the buffer: left there, it would
                    // hold the pipe's 4 KiB block for as long as the client waits (idle memory
                    // per connection, docs/performance.md "Memory per idle connection"). Copy it
                    // out and consume it; should the request go to Kestrel after all,
                    // PrefixedTransport puts the copy back in front of the connection's input.
                    state.Keep(buffer);
                    input.AdvanceTo(buffer.End);
                    continue;
                }

                input.AdvanceTo(buffer.Start, buffer.End);
            }
        }
        catch (IOException)
        {
            // The client reset the connection (ConnectionResetException is an IOException):
            // there is no one left to answer.
        }
        finally
        {
            if (state.Lease is not null)
            {
                // Kestrel's connection, waiting for a next request, ends.
                await state.Lease.EndAsync();
            }
        }
    }

    /// <summary>
    /// Gives Kestrel the rest of the connection, <paramref name="prefix"/> read first when there
    /// is one: the connection's Kestrel of the lent requests when there is one and it can take
    /// it, a new one otherwise.
    /// </summary>
    private static async Task HandOnAsync(ConnectionContext connection, ConnectionDelegate next, KestrelLease? lease, byte[]? prefix)
    {
        if (lease is not null)
        {
            if (await lease.HandOverAsync(prefix))
            {
                return;
            }

            // Its keep-alive timer ran out while the fast path served the connection (or it
            // ended): another Kestrel connection takes it from here. Kestrel counts requests
            // per connection of its own, so that one's trace identifiers start again from 1.
            await lease.EndAsync();
        }

        if (prefix is not null)
        {
            connection.Transport = new PrefixedTransport(prefix, connection.Transport);
        }

        await next(connection);
    }
}
