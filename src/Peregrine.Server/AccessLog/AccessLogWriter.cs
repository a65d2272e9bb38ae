using System.Globalization;
using System.Net;
using System.Text;
using System.Threading.Channels;

namespace Peregrine.Server.AccessLog;

/// <summary>What one request leaves in the access log, captured on the request thread and formatted later.</summary>
internal readonly record struct AccessLogEntry(
    DateTime Time,
    IPAddress? RemoteAddress,
    string Method,
    string Target,
    string Protocol,
    int Status,
    long? Bytes,
    string? Referer,
    string? UserAgent,
    double Milliseconds);

/// <summary>
/// Writes access log lines on a background task, so that a request only hands over a small
/// struct and never waits for the disk. Lines are buffered and flushed each time the queue
/// runs dry, so the log is at most one batch behind. If the writer falls more than
/// <see cref="Capacity"/> lines behind (a stalled disk or pipe), further lines are dropped
/// and counted, rather than making requests wait; the count is logged as a warning.
/// </summary>
internal sealed partial class AccessLogWriter : IAsyncDisposable
{
    /// <summary>Lines queued before dropping: about 10 MB of entries, seconds of traffic at 100k requests/s.</summary>
    public const int Capacity = 1 << 16;

    private readonly Channel<AccessLogEntry> _queue = Channel.CreateBounded<AccessLogEntry>(new BoundedChannelOptions(Capacity)
    {
        SingleReader = true,
        FullMode = BoundedChannelFullMode.Wait,
    });

    private readonly StreamWriter _output;
    private readonly ILogger _logger;
    private readonly Task _drain;
    private long _dropped;

    public AccessLogWriter(Stream output, ILogger logger)
    {
        // 64 KiB: a few hundred lines per write call under load.
        _output = new StreamWriter(output, new UTF8Encoding(encoderShouldEmitUTF8Identifier: false), bufferSize: 64 * 1024);
        _logger = logger;
        _drain = Task.Run(DrainAsync);
    }

    /// <summary>
    /// Opens the access log <paramref name="target"/>: appended to, readable by others; <c>-</c> is
    /// standard output. A failure is one message under <paramref name="option"/>, the setting's name.
    /// </summary>
    public static Stream? Open(string target, string option, List<string> errors)
    {
        if (target == "-")
        {
            return Console.OpenStandardOutput();
        }

        try
        {
            return new FileStream(target, FileMode.Append, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{option}: cannot open '{target}' for writing: {ex.Message}");
            return null;
        }
    }

    public void Write(in AccessLogEntry entry)
    {
        if (!_queue.Writer.TryWrite(entry))
        {
            Interlocked.Increment(ref _dropped);
        }
    }

    private async Task DrainAsync()
    {
        var reader = _queue.Reader;
        var line = new StringBuilder(256);
        while (await reader.WaitToReadAsync().ConfigureAwait(false))
        {
            try
            {
                while (reader.TryRead(out var entry))
                {
                    line.Clear();
                    Format(line, entry);
                    _output.Write(line);
                }

                await _output.FlushAsync().ConfigureAwait(false);
            }
            catch (IOException ex)
            {
                // A full disk or a closed pipe: the lines in hand are lost, later ones may fare better.
                LogWriteFailed(_logger, ex.Message);
            }

            if (Interlocked.Exchange(ref _dropped, 0) is > 0 and var dropped)
            {
                LogDropped(_logger, dropped);
            }
        }
    }

    /// <summary>
    /// The Combined Log Format of Apache and nginx, with the duration in milliseconds appended:
    /// <c>127.0.0.1 - - [10/Oct/2025:13:55:36 +0000] "GET /a.css HTTP/2" 200 1043 "-" "curl/8.5.0" 0.214</c>.
    /// Bytes is the response's declared length (0 for HEAD, 304 and 204, <c>-</c> when not
    /// known in advance); a transfer cut short by the client still shows the full length.
    /// </summary>
    internal static void Format(StringBuilder line, in AccessLogEntry entry)
    {
        var invariant = CultureInfo.InvariantCulture;
        line.Append(entry.RemoteAddress?.ToString() ?? "-")
            .Append(" - - [")
            .Append(entry.Time.ToString("dd/MMM/yyyy:HH:mm:ss", invariant))
            .Append(" +0000] \"");
        AppendEscaped(line, entry.Method);
        line.Append(' ');
        AppendEscaped(line, entry.Target);
        line.Append(' ');
        AppendEscaped(line, entry.Protocol);
        line.Append("\" ").Append(entry.Status.ToString(invariant)).Append(' ');
        if (entry.Bytes is { } bytes)
        {
            line.Append(bytes.ToString(invariant));
        }
        else
        {
            line.Append('-');
        }

        line.Append(" \"");
        AppendEscaped(line, string.IsNullOrEmpty(entry.Referer) ? "-" : entry.Referer);
        line.Append("\" \"");
        AppendEscaped(line, string.IsNullOrEmpty(entry.UserAgent) ? "-" : entry.UserAgent);
        line.Append("\" ").Append(entry.Milliseconds.ToString("0.000", invariant)).Append('\n');
    }

    /// <summary>
    /// Escapes as nginx does (<c>\"</c>, <c>\\</c>, <c>\xHH</c>), so that a request line or
    /// header cannot forge a log line or break a field: anything but printable ASCII is escaped.
    /// </summary>
    private static void AppendEscaped(StringBuilder line, string value)
    {
        foreach (var c in value)
        {
            if (c is '"' or '\\')
            {
                line.Append('\\').Append(c);
            }
            else if (c is >= ' ' and <= '~')
            {
                line.Append(c);
            }
            else
            {
                line.Append(c <= 0xFF ? $"\\x{(int)c:X2}" : $"\\u{(int)c:X4}");
            }
        }
    }

    public async ValueTask DisposeAsync()
    {
        // The server has stopped by now (the container disposes singletons last), so every
        // request's line is queued: finish writing them, then close the file.
        _queue.Writer.TryComplete();
        await _drain.ConfigureAwait(false);
        await _output.DisposeAsync().ConfigureAwait(false);
    }

    [LoggerMessage(101, LogLevel.Warning, "The access log fell behind; {Count} lines were dropped.")]
    private static partial void LogDropped(ILogger logger, long count);

    [LoggerMessage(102, LogLevel.Warning, "Could not write to the access log: {Reason}")]
    private static partial void LogWriteFailed(ILogger logger, string reason);
}
