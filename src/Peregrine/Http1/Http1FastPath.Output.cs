using System.Buffers;
using System.IO.Pipelines;
using Microsoft.AspNetCore.Connections;

namespace Peregrine.Http1;

// Writing to the connection: flushes held to Kestrel's minimum response data rate, and the
// refusals the fast path answers itself (a head cut short, a request head too slow).
internal sealed partial class Http1FastPath
{
    /// <summary>
    /// Kestrel's answer to a head the client ended (FIN) before it was complete
    /// (Http1Connection.TryParseRequest: InvalidRequestLine or MalformedRequestInvalidHeaders):
    /// 400, no body, and the connection closes. The fast path gives it itself rather than hand
    /// the connection on: Kestrel's socket transport reports the connection closed as soon as it
    /// reads the FIN, and an HTTP/1.1 connection Kestrel starts after that aborts its output
    /// before answering (HttpConnection.OnConnectionClosed), so a hand-off that came later than
    /// that report, as it does under load, sent nothing at all.
    /// </summary>
    private async ValueTask RefuseEndedHeadAsync(PipeWriter output, FastPathHeartbeat.Watched watched)
    {
        WriteRefusal(output, "HTTP/1.1 400 Bad Request\r\n"u8);
        await FlushAsync(output, watched);
    }

    /// <summary>
    /// Kestrel's answer to a head not complete within <c>RequestHeadersTimeout</c>
    /// (Http1Connection.OnRequestHeadersTimeout): 408, no body, and the connection closes.
    /// </summary>
    private void WriteRequestTimeout(PipeWriter output) => WriteRefusal(output, "HTTP/1.1 408 Request Timeout\r\n"u8);

    /// <summary>Kestrel's shape for an error it answers before any request runs: the status line, no body, Connection: close.</summary>
    private void WriteRefusal(PipeWriter output, ReadOnlySpan<byte> statusLine)
    {
        output.Write(statusLine);
        output.Write("Content-Length: 0\r\nConnection: close\r\n"u8);
        output.Write(HttpDate.Line);
        if (_serverHeader)
        {
            output.Write("Server: Kestrel\r\n"u8);
        }

        output.Write("\r\n"u8);
    }

    /// <summary>
    /// Closes a connection whose client stopped taking its responses. Returning alone would not:
    /// Kestrel's transport would wait to send what is still in the pipe for as long as the client
    /// does not read. Kestrel aborts its own connections the same way.
    /// </summary>
    private static void AbortStalled(ConnectionContext connection)
        => connection.Abort(new ConnectionAbortedException("The client did not read the response at the minimum data rate."));

    /// <summary>
    /// Flushes; if the client is not reading (the flush waits on back-pressure), it must take
    /// the bytes at Kestrel's minimum response data rate (240 bytes/s after a 5 s grace period
    /// by default) or the connection is closed, as Kestrel closes its own.
    /// </summary>
    private ValueTask<FlushResult> FlushAsync(PipeWriter output, FastPathHeartbeat.Watched watched)
    {
        var bytes = output.CanGetUnflushedBytes ? output.UnflushedBytes : FlushThreshold;
        var pending = output.FlushAsync();
        if (!pending.IsCompletedSuccessfully)
        {
            return AwaitFlushAsync(pending, output, watched, bytes);
        }

        // Read once: a completed ValueTask may not be awaited again.
        var result = pending.Result;
        return result.IsCanceled
            ? AwaitFlushAsync(new ValueTask<FlushResult>(result), output, watched, bytes)
            : new ValueTask<FlushResult>(result);
    }

    /// <summary>
    /// The time a client that is not reading has to take <paramref name="bytes"/>, under
    /// Kestrel's minimum response data rate: its grace period and the bytes at its rate. Null
    /// when there is no minimum: no rate set, or a grace period or a rate so extreme that the
    /// deadline lies decades away (Kestrel accepts <see cref="TimeSpan.MaxValue"/>).
    /// </summary>
    internal TimeSpan? SendTime(long bytes)
    {
        var seconds = _minResponseDataRate is { BytesPerSecond: > 0 } rate ? rate.GracePeriod.TotalSeconds + (bytes / rate.BytesPerSecond) : double.PositiveInfinity;
        return seconds < MaxSendSeconds ? TimeSpan.FromSeconds(seconds) : null;
    }

    private async ValueTask<FlushResult> AwaitFlushAsync(ValueTask<FlushResult> pending, PipeWriter output, FastPathHeartbeat.Watched watched, long bytes)
    {
        while (true)
        {
            if (SendTime(bytes) is { } time)
            {
                watched.Arm(time);
            }
            else
            {
                watched.Disarm();
            }

            FlushResult result;
            watched.Flushing = true;
            try
            {
                result = await pending;
            }
            finally
            {
                watched.Flushing = false;
            }

            if (!result.IsCanceled || Environment.TickCount64 > Volatile.Read(ref watched.Deadline))
            {
                return result;
            }

            // A cancellation that raced with the end of an earlier wait: flush again.
            pending = output.FlushAsync();
        }
    }
}
