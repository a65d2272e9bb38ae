using System.Buffers;
using System.IO.Pipelines;
using System.Security.Cryptography.X509Certificates;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Peregrine.Http1;

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
        // A connection the cleartext reactor answered first (Connections/CleartextReactor) was looked at
        // for the preface there, and may be waiting to send a response before the client sends
        // another byte.
        listen.Use(next => connection => connection.Features.Get<ConnectionState>() is null ? RunAsync(connection, next, firstBytesTimeout) : next(connection));
    }

    /// <summary>
    /// Marks a connection that opens with the preface as h2, and closes one that sends nothing
    /// within <paramref name="firstBytesTimeout"/>, as Kestrel's request-headers timeout would.
    /// </summary>
    private static async Task RunAsync(ConnectionContext connection, ConnectionDelegate next, TimeSpan firstBytesTimeout)
    {
        // Timed by the fast path's once-a-second sweep: a linked token source and a CancelAfter
        // timer per connection cost more memory per idle connection than the rest of this check
        // (docs/performance.md, "Memory per idle connection").
        var input = connection.Transport.Input;
        bool? detected;
        using (var watched = FastPathHeartbeat.Watch(input, connection.Transport.Output))
        {
            watched.Arm(firstBytesTimeout);
            try
            {
                // One method, one state machine per waiting connection.
                while (true)
                {
                    var result = await input.ReadAsync();
                    var buffer = result.Buffer;
                    detected = result.IsCanceled ? null : Compare(buffer);
                    if (result.IsCanceled || detected is not null || result.IsCompleted)
                    {
                        // Examined nothing: the protocol handler reads these bytes again.
                        input.AdvanceTo(buffer.Start, buffer.Start);
                        if (!result.IsCanceled && detected is null && !buffer.IsEmpty)
                        {
                            detected = false;
                        }

                        break;
                    }

                    input.AdvanceTo(buffer.Start, buffer.End);
                }
            }
            catch (Exception e) when (e is IOException or ConnectionAbortedException)
            {
                detected = null;
            }

            // A sweep may have cancelled the read just as it completed: once past the deadline
            // the connection is closed, so no cancellation is left for the protocol's first read.
            if (Environment.TickCount64 > Volatile.Read(ref watched.Deadline))
            {
                detected = null;
            }
        }

        if (detected is null)
        {
            // Nothing arrived in time, or the peer left: close as Kestrel's own request-headers
            // timeout would have.
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
