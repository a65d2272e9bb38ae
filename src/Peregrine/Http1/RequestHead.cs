
namespace Peregrine.Http1;

/// <summary>What <see cref="RequestHead.Find"/> made of the bytes at the start of a buffer.</summary>
internal enum HeadFraming : byte
{
    /// <summary>A whole head in canonical framing, within the limits, ending with its blank line.</summary>
    Complete,

    /// <summary>No blank line yet, and nothing in what has arrived rules the fast path out.</summary>
    Incomplete,

    /// <summary>
    /// Kestrel's to answer: a bare CR or LF, a NUL, a limit reached or nearly reached, or a
    /// complete line the fast path would not answer. Kestrel may accept it (it takes a bare LF as
    /// a line end) or refuse it with its own status.
    /// </summary>
    HandOff,
}

/// <summary>
/// A request head the fast path can answer: GET or HEAD, HTTP/1.1 or HTTP/1.0, a path of plain
/// characters (no percent-encoding, no dot segments), no body, and no header whose handling needs
/// the full HTTP stack. <see cref="Find"/> frames it and reads it in one pass, and says no to
/// anything else (<see cref="IsAnswerable"/>), and the request goes to Kestrel untouched, which
/// then applies its own validation and limits. The fast path is therefore never more permissive
/// than Kestrel: it only skips work for requests Kestrel would accept as they are.
/// </summary>
internal ref partial struct RequestHead
{
    /// <summary>The head is complete and every line of it is one the fast path answers.</summary>
    public bool IsAnswerable;

    /// <summary>
    /// The head is complete, every line of it plain, and it asks for a GET or HEAD of a plain
    /// path with no body and nothing that would take the connection from HTTP/1.1 (an upgrade,
    /// an expectation, a transfer coding): answered or not, Kestrel's parser frames it exactly
    /// as the fast path does, and after answering it Kestrel would read the next head where the
    /// fast path would. Its other fields (a validator the fast path does not evaluate, a field
    /// given twice) are Kestrel's to read. A request the fast path does not answer is
    /// lent to Kestrel when this is set (<see cref="KestrelLease"/>), and the connection stays
    /// the fast path's.
    /// </summary>
    public bool IsLendable;

    public bool IsHead;

    /// <summary>The request line says HTTP/1.0.</summary>
    public bool Http10;

    /// <summary>Connection has the close option.</summary>
    public bool Close;

    /// <summary>Connection has the keep-alive option, which HTTP/1.0 needs to keep the connection (RFC 9112 §9.3).</summary>
    public bool KeepAlive;

    public ReadOnlySpan<byte> Path;
    public ReadOnlySpan<byte> AcceptEncoding;
    public ReadOnlySpan<byte> IfNoneMatch;
    public ReadOnlySpan<byte> IfModifiedSince;

    /// <summary>The head has one Range line, whose value is <see cref="Range"/> (empty or not).</summary>
    public bool HasRange;

    public ReadOnlySpan<byte> Range;

    /// <summary>The head has one If-Range line, whose value is <see cref="IfRange"/>.</summary>
    public bool HasIfRange;

    public ReadOnlySpan<byte> IfRange;
    public bool HasOrigin;
    private bool _hasContentLength;

    // A field that makes the head unlendable (IsLendable): read only while it could still be lent.
    private bool _unlendable;

    // The classes of bytes in a request head, one bit each, for the short runs the fast path reads
    // (a path, a field name, a host). Under Native AOT, calls into SearchValues cannot be
    // devirtualised, and in bench/Alloc's "heads" they took a third of reading a head; a lookup per
    // byte costs less for runs this short. RequestHeadTests checks the table against each set.
    internal const byte Token = 1, PathChar = 2, QueryChar = 4, HostNameChar = 8, Ipv6Char = 16, Digit = 32;

    // Token: RFC 9110 §5.6.2 tchar. PathChar: characters that need no decoding or normalisation
    // (RFC 3986 unreserved, sub-delims, ':' '@' and '/'); '%' is not among them, and an encoded
    // path goes to Kestrel to be decoded. QueryChar: visible ASCII but '#' (Kestrel hands the
    // query on undecoded). HostNameChar: a subset of the host names Kestrel accepts
    // (HttpCharacters allows "!$&'()-._~" too). Ipv6Char: an IPv6 literal's characters as
    // HttpUtilities.IsHostHeaderValid checks them. Bytes from 0x80 up are in no class.
    internal static ReadOnlySpan<byte> Classes =>
    [
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0, // 0x00-0x0F
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0, // 0x10-0x1F
         0,  7,  4,  1,  7,  5,  7,  7,  6,  6,  7,  7,  6, 15, 31,  6, // 0x20-0x2F: !"#$%&'()*+,-./
        63, 63, 63, 63, 63, 63, 63, 63, 63, 63, 22,  6,  4,  6,  4,  4, // 0x30-0x3F: 0-9 :;<=>?
         6, 31, 31, 31, 31, 31, 31, 15, 15, 15, 15, 15, 15, 15, 15, 15, // 0x40-0x4F: @A-O
        15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  4,  4,  4,  5,  7, // 0x50-0x5F: P-Z [\]^_
         5, 31, 31, 31, 31, 31, 31, 15, 15, 15, 15, 15, 15, 15, 15, 15, // 0x60-0x6F: `a-o
        15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15,  4,  5,  4,  7,  0, // 0x70-0x7F: p-z {|}~
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0, // 0x80-0xFF
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
         0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,
    ];

    /// <summary>
    /// Frames the head at the start of <paramref name="buffer"/> and reads it, in one pass: one
    /// vectorised search per line for its first byte outside SP to '~' (<see cref="LineEnd"/>),
    /// each CR followed by its LF, the lines within <paramref name="limits"/>, up to the blank
    /// line, and each complete line read as it is framed. A head that is not complete yet has its complete lines checked too, so
    /// that one Kestrel would refuse now is handed off now rather than waited on; but for a
    /// connection's <paramref name="first"/> head, one that <see cref="KestrelFront"/> decides on
    /// whole is waited on. <paramref name="length"/> is the head's length, blank line included,
    /// when it is complete; <paramref name="request"/> is what it asks for when it is also
    /// <see cref="IsAnswerable"/>.
    /// </summary>
    public static HeadFraming Find(ReadOnlySpan<byte> buffer, scoped in HeadLimits limits, out int length, out RequestHead request, bool first = false)
    {
        length = 0;
        request = default;
        var end = LineEnd(buffer, limits.RequestLine, out var framing, out var plain);
        if (end <= 0)
        {
            // end == 0: a blank line before the request. Kestrel skips those; the fast path
            // leaves them to it.
            return end == 0 ? HeadFraming.HandOff : Unfinished(buffer, 0, framing, answerable: true, first);
        }

        var answerable = plain && RequestLine(ref request, buffer[..end]);

        // Fields are read while the head could be answered or lent; past that, only framed.
        var lendable = answerable;
        var at = end + 2;
        var budget = limits.HeaderBytes;
        var fields = 0;
        var hosts = 0;
        while (true)
        {
            end = LineEnd(buffer[at..], budget, out framing, out plain);
            if (end < 0)
            {
                return Unfinished(buffer, at, framing, answerable || lendable, first);
            }

            if (end == 0)
            {
                length = at + 2;

                // RFC 9112 §3.2: exactly one Host (Kestrel refuses none or two with a 400).
                request.IsAnswerable = answerable && hosts == 1;
                request.IsLendable = lendable && hosts == 1 && !request._unlendable;
                return HeadFraming.Complete;
            }

            if (++fields > limits.HeaderCount)
            {
                return HeadFraming.HandOff;
            }

            if (!plain)
            {
                answerable = lendable = false;
            }
            else if (lendable)
            {
                answerable = Field(ref request, buffer.Slice(at, end), ref hosts) && answerable;
                lendable = !request._unlendable;
            }

            at += end + 2;
            budget -= end + 2;
        }
    }

    /// <summary>
    /// The index of the CR that ends the first line of <paramref name="rest"/>, when that line
    /// and its LF fit in <paramref name="budget"/> bytes. Otherwise -1, and
    /// <see cref="HeadFraming.Incomplete"/> if more bytes could still end it within the budget.
    /// <paramref name="plain"/>: the line holds only SP to '~' and HTAB, which is all that RFC 9110
    /// §5.5 allows in a field (field-vchar, SP, HTAB) and all the fast path answers. Kestrel also
    /// takes UTF-8 and obs-text; those go to it.
    /// </summary>
    private static int LineEnd(ReadOnlySpan<byte> rest, int budget, out HeadFraming framing, out bool plain)
    {
        var window = rest.Length > budget ? rest[..budget] : rest;

        // Usually one search: the first byte outside SP to '~' is the CR that ends the line.
        var at = window.IndexOfAnyExceptInRange((byte)' ', (byte)'~');
        if ((uint)at < (uint)window.Length - 1 && window[at] == '\r' && window[at + 1] == '\n')
        {
            framing = HeadFraming.Complete;
            plain = true;
            return at;
        }

        return LineEndPastText(window, at, budget, out framing, out plain);
    }

    /// <summary><see cref="LineEnd"/> once the first byte outside SP to '~', at <paramref name="at"/>, is not a CR followed by its LF.</summary>
    private static int LineEndPastText(ReadOnlySpan<byte> window, int at, int budget, out HeadFraming framing, out bool plain)
    {
        while (at >= 0 && window[at] == '\t')
        {
            var next = window[(at + 1)..].IndexOfAnyExceptInRange((byte)' ', (byte)'~');
            at = next < 0 ? -1 : at + 1 + next;
        }

        plain = true;
        if (at >= 0 && window[at] != '\r')
        {
            // Not plain. The line still needs framing: it ends at the next of the bytes that
            // end or break a line. Kestrel ends a line at a bare LF too, and at a NUL in the
            // request line refuses it at once (HttpParser.ParseRequestLine): the fast path frames
            // only CRLF, and hands off the moment it sees any of the three elsewhere.
            plain = false;
            var end = window[at..].IndexOfAny((byte)'\r', (byte)'\n', (byte)0);
            at = end < 0 ? -1 : at + end;
        }

        if (at >= 0 && window[at] == '\r' && at + 1 < window.Length)
        {
            framing = window[at + 1] == '\n' ? HeadFraming.Complete : HeadFraming.HandOff;
            return framing == HeadFraming.Complete ? at : -1;
        }

        // A bare LF or a NUL; or no line end, or a CR still waiting for its LF, with the budget
        // spent (the line is at or near Kestrel's limit) or not.
        framing = (at >= 0 && window[at] != '\r') || window.Length == budget ? HeadFraming.HandOff : HeadFraming.Incomplete;
        return -1;
    }

    /// <summary>An unfinished head waits for more only while its complete lines are ones the fast path answers or lends.</summary>
    private static HeadFraming Unfinished(ReadOnlySpan<byte> buffer, int complete, HeadFraming framing, bool answerable, bool first)
        => framing == HeadFraming.Incomplete && !answerable && !(first && KestrelFront.NeedsWhole(buffer[..complete]))
            ? HeadFraming.HandOff
            : framing;

    /// <summary>RFC 9112 §3: <c>GET</c> or <c>HEAD</c>, one SP, an origin-form target, one SP, <c>HTTP/1.1</c> or <c>HTTP/1.0</c>.</summary>
    private static bool RequestLine(ref RequestHead request, ReadOnlySpan<byte> line)
    {
        if (line.StartsWith("GET "u8))
        {
            line = line[4..];
        }
        else if (line.StartsWith("HEAD "u8))
        {
            request.IsHead = true;
            line = line[5..];
        }
        else
        {
            return false;
        }

        if (line.EndsWith(" HTTP/1.0"u8))
        {
            // RFC 9112 §2.3: Kestrel answers HTTP/1.0 with an HTTP/1.1 response, and so does
            // the fast path (Http1FastPath.TryRespond: the connection options differ).
            request.Http10 = true;
        }
        else if (!line.EndsWith(" HTTP/1.1"u8))
        {
            return false;
        }

        // The path: plain characters up to the query, starting with '/', with no dot segment
        // (nor anything else that starts "/.", which Kestrel would have to look at).
        var target = line[..^9];
        if (target.IsEmpty || target[0] != '/')
        {
            return false;
        }

        var classes = Classes;
        var at = 1;
        for (; at < target.Length && target[at] != '?'; at++)
        {
            if ((classes[target[at]] & PathChar) == 0 || (target[at] == '.' && target[at - 1] == '/'))
            {
                return false;
            }
        }

        request.Path = target[..at];
        return All(target[Math.Min(at + 1, target.Length)..], QueryChar);
    }
}
