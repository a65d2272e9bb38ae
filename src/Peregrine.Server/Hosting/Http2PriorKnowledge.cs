using System.Buffers;
using System.Collections.Concurrent;
using System.IO.Pipelines;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;

namespace Peregrine.Server.Hosting;

/// <summary>
/// HTTP/1.1 and HTTP/2 on one cleartext port. Kestrel (.NET 10) picks HTTP/2 only through TLS
/// ALPN and falls back to HTTP/1.1 on a cleartext Http1AndHttp2 endpoint. This connection
/// middleware peeks at the first bytes without consuming them: a connection that opens with
/// the HTTP/2 preface (RFC 9113 §3.3, "prior knowledge") is marked as if ALPN had chosen
/// "h2", and everything else goes to HTTP/1.1 unchanged. The cost is one extra read per
/// connection, not per request.
/// </summary>
internal static class Http2PriorKnowledge
{
    private static ReadOnlySpan<byte> Preface => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8;

    /// <summary>
    /// Enables detection on <paramref name="listen"/>. The server must allow the request's
    /// <c>:scheme</c> to differ from the connection's (<see cref="KestrelServerOptions.AllowAlternateSchemes"/>),
    /// since Kestrel takes a connection with a TLS feature to be https.
    /// </summary>
    public static void UseHttp2PriorKnowledge(this ListenOptions listen, TimeSpan firstBytesTimeout)
    {
        listen.Use(next => connection => RunAsync(connection, next, (long)firstBytesTimeout.TotalMilliseconds));
    }

    // Connections still waiting for their first bytes, and the one timer that times them all
    // out: a linked token source and a CancelAfter timer per connection cost more memory per
    // idle connection than the rest of this check (bench/RESULTS.md, "Footprint").
    private static readonly ConcurrentDictionary<Waiting, byte> s_waiting = new();
    private static readonly Timer s_timer = new(static _ => Sweep(), null, 1000, 1000);

    private sealed class Waiting(PipeReader input, long deadline)
    {
        public readonly PipeReader Input = input;
        public readonly long Deadline = deadline;

        /// <summary><see cref="Pending"/>, <see cref="Decided"/> or <see cref="TimedOut"/>: whichever of the read and the sweep comes first wins.</summary>
        public int State;

        public const int Pending = 0;
        public const int Decided = 1;
        public const int TimedOut = 2;
    }

    private static void Sweep()
    {
        var now = Environment.TickCount64;
        foreach (var (waiting, _) in s_waiting)
        {
            if (now > waiting.Deadline && Interlocked.CompareExchange(ref waiting.State, Waiting.TimedOut, Waiting.Pending) == Waiting.Pending)
            {
                waiting.Input.CancelPendingRead();
            }
        }
    }

    private static async Task RunAsync(ConnectionContext connection, ConnectionDelegate next, long timeoutMs)
    {
        GC.KeepAlive(s_timer);
        var input = connection.Transport.Input;
        var waiting = new Waiting(input, Environment.TickCount64 + timeoutMs);
        s_waiting.TryAdd(waiting, 0);
        bool? detected;
        try
        {
            while (true)
            {
                var result = await input.ReadAsync();
                var buffer = result.Buffer;
                if (result.IsCanceled)
                {
                    input.AdvanceTo(buffer.Start, buffer.Start);
                    detected = null;
                    break;
                }

                var verdict = Compare(buffer);
                if (verdict is not null || result.IsCompleted)
                {
                    // Examined nothing: the protocol handler reads these bytes again.
                    input.AdvanceTo(buffer.Start, buffer.Start);
                    detected = verdict ?? (buffer.IsEmpty ? null : false);
                    break;
                }

                input.AdvanceTo(buffer.Start, buffer.End);
            }
        }
        catch (Exception e) when (e is IOException or ConnectionAbortedException or OperationCanceledException)
        {
            detected = null;
        }
        finally
        {
            s_waiting.TryRemove(waiting, out _);
        }

        // Nothing arrived in time, or the peer left: close as Kestrel's own request-headers
        // timeout would have. The same when the sweep timed the connection out first.
        if (detected is null || Interlocked.CompareExchange(ref waiting.State, Waiting.Decided, Waiting.Pending) != Waiting.Pending)
        {
            connection.Abort();
            return;
        }

        if (detected.Value)
        {
            connection.Features.Set<ITlsConnectionFeature>(PriorKnowledgeFeature.Instance);
            connection.Features.Set<ITlsApplicationProtocolFeature>(PriorKnowledgeFeature.Instance);
        }

        await next(connection);
    }

    private static bool? Compare(ReadOnlySequence<byte> buffer)
    {
        var length = (int)Math.Min(buffer.Length, Preface.Length);
        Span<byte> head = stackalloc byte[Preface.Length];
        buffer.Slice(0, length).CopyTo(head);
        if (!head[..length].SequenceEqual(Preface[..length]))
        {
            return false;
        }

        return length == Preface.Length ? true : null;
    }

    private sealed class PriorKnowledgeFeature : ITlsConnectionFeature, ITlsApplicationProtocolFeature
    {
        public static readonly PriorKnowledgeFeature Instance = new();

        private static readonly byte[] s_h2 = "h2"u8.ToArray();

        public ReadOnlyMemory<byte> ApplicationProtocol => s_h2;

        public X509Certificate2? ClientCertificate
        {
            get => null;
            set { }
        }

        public Task<X509Certificate2?> GetClientCertificateAsync(CancellationToken cancellationToken) => Task.FromResult<X509Certificate2?>(null);
    }
}
