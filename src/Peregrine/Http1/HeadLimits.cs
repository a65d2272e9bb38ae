using Microsoft.AspNetCore.Server.Kestrel.Core;

namespace Peregrine.Http1;

/// <summary>
/// The part of Kestrel's request limits within which the fast path answers. A head at or near a
/// limit is handed off whole, and Kestrel applies the limit with its own status (414, 431).
/// </summary>
/// <remarks>
/// How Kestrel counts (aspnetcore, src/Servers/Kestrel/Core/src/Internal/Http):
/// <list type="bullet">
/// <item>Http1Connection.TakeStartLine: the request line with its CRLF must lie within
/// <see cref="KestrelServerLimits.MaxRequestLineSize"/> bytes, else 414. Blank lines before the
/// request are skipped first and not counted.</item>
/// <item>Http1Connection.TakeMessageHeaders and OnReset: the header lines with their line ends,
/// and the blank line that ends them, may take
/// <see cref="KestrelServerLimits.MaxRequestHeadersTotalSize"/> + 2 bytes, else 431. The request
/// line is not counted.</item>
/// <item>HttpProtocol.IncrementRequestHeadersCount: more than
/// <see cref="KestrelServerLimits.MaxRequestHeaderCount"/> header lines, else 431.</item>
/// </list>
/// Each is checked as the bytes arrive, so Kestrel refuses an unfinished head as soon as it
/// passes a limit; <see cref="RequestHead.Find"/> hands one off before that.
/// </remarks>
internal readonly struct HeadLimits
{
    // Kept clear of each byte limit, so that a change in how Kestrel counts a line end or the
    // blank line cannot put a head the fast path answers beyond it.
    private const int ByteMargin = 32;

    public HeadLimits(KestrelServerLimits limits)
    {
        RequestLine = Math.Max(0, limits.MaxRequestLineSize - ByteMargin);
        HeaderBytes = Math.Max(0, limits.MaxRequestHeadersTotalSize - ByteMargin);

        // At the limit is near it: a head with exactly MaxRequestHeaderCount fields goes to Kestrel.
        HeaderCount = limits.MaxRequestHeaderCount - 1;
        Head = (int)Math.Min(int.MaxValue, (long)RequestLine + HeaderBytes);
    }

    /// <summary>The longest request line answered, CRLF included.</summary>
    public int RequestLine { get; }

    /// <summary>The most bytes of header lines answered, the blank line that ends them included.</summary>
    public int HeaderBytes { get; }

    /// <summary>The most header lines answered.</summary>
    public int HeaderCount { get; }

    /// <summary>The longest head answered.</summary>
    public int Head { get; }
}
