using System.Buffers;
using System.Text;
using Peregrine.Syntax;

namespace Peregrine.Http1;

/// <summary>What is done ahead of Kestrel with a connection's first head.</summary>
internal enum FrontAction : byte
{
    /// <summary>Kestrel's, as it is.</summary>
    None,

    /// <summary>Kestrel's, with the Host in a form Kestrel takes (<see cref="KestrelFront.Decide"/>).</summary>
    Rewrite,

    /// <summary>CONNECT to an authority: answered 405 here, and the connection closed.</summary>
    RefuseConnect,
}

/// <summary>
/// The answers Kestrel's parser would get wrong, given before it runs. Kestrel refuses with a
/// 400, before any application code, two kinds of request that RFC 9110/9112 make valid:
/// <list type="bullet">
/// <item>a Host in a valid form its check leaves out (<see cref="HostForm.EmptyPort"/>,
/// <see cref="HostForm.Unaccepted"/>): the head goes to Kestrel with the Host rewritten, an
/// empty port dropped (an equivalent form, RFC 3986 §6.2.3) and any other such Host emptied
/// (a form it takes; Request.Host is then empty), and with <c>Connection: close</c>, so that
/// the client's next request comes on a new connection where it is looked at first again;</item>
/// <item>CONNECT to an authority whose Host differs from it: an origin server answers a method
/// it does not implement with 405 (RFC 9110 §9.3.6, §15.5.6), not 400.</item>
/// </list>
/// Only a connection's first head is looked at: after it, Kestrel reads the connection
/// itself, and following its framing here (bodies, chunking) would be a second parser to keep
/// in step with Kestrel's. So a second request on a kept-alive connection that Kestrel took
/// over still gets Kestrel's 400; the fast path, which reads every head it answers, does the
/// same, so that both paths answer alike. A first head arriving in pieces is held back until its
/// Host line has come whenever that Host could be one to rewrite (<see cref="NeedsWhole"/>), even
/// where its request line already sends it to Kestrel: given the head in two pieces rather than
/// one, Kestrel would otherwise refuse what it answers whole.
/// </summary>
internal static class KestrelFront
{
    // RFC 9110 §5.6.2 tchar; §5.5 field-vchar, SP and HTAB.
    private static readonly SearchValues<byte> s_tokenChars = SearchValues.Create("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~"u8);
    private static readonly SearchValues<byte> s_fieldChars = SearchValues.Create("\t !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"u8);

    /// <summary>
    /// Whether the complete lines of an unfinished first head call for the whole head before
    /// deciding: CONNECT, a Host that <see cref="Decide"/> would rewrite, or no Host line yet
    /// behind a request line that <see cref="Decide"/> acts on (the Host still to come may be
    /// one it rewrites). Kestrel decides all three only once the head is complete, so waiting
    /// for it changes no timing; a line Kestrel refuses at once is not waited on.
    /// </summary>
    public static bool NeedsWhole(ReadOnlySpan<byte> lines)
    {
        var needs = lines.StartsWith("CONNECT "u8);
        var decidable = false;
        var hostSeen = false;
        var requestLine = true;
        foreach (var range in lines.Split("\r\n"u8))
        {
            var line = lines[range];
            if (requestLine)
            {
                requestLine = false;
                decidable = IsDecidable(line);
                continue;
            }

            if (line.IsEmpty)
            {
                continue;
            }

            if (!IsField(line))
            {
                // Kestrel refuses the head at this line, without waiting for the rest.
                return false;
            }

            if (HostValue(line, out var value))
            {
                hostSeen = true;
                needs |= HostSyntax.Classify(value) is HostForm.EmptyPort or HostForm.Unaccepted;
            }
        }

        return needs || (decidable && !hostSeen);
    }

    /// <summary>
    /// A request line <see cref="Decide"/> looks further at, and Kestrel's parser takes as it is:
    /// a token, one SP, an origin-form target of visible characters, one SP, HTTP/1.1 or HTTP/1.0.
    /// </summary>
    private static bool IsDecidable(ReadOnlySpan<byte> line)
    {
        var method = line.IndexOf((byte)' ');
        var version = line.LastIndexOf((byte)' ');
        if (method <= 0 || version <= method + 1 || line[method + 1] != '/')
        {
            return false;
        }

        var target = line[(method + 1)..version];
        return !line[..method].ContainsAnyExcept(s_tokenChars)
            && !target.ContainsAnyExceptInRange((byte)'!', (byte)'~')
            && (line[(version + 1)..].SequenceEqual("HTTP/1.1"u8) || line[(version + 1)..].SequenceEqual("HTTP/1.0"u8));
    }

    /// <summary>
    /// Decides on a complete first head (blank line included) that the fast path does not
    /// answer. <paramref name="rewritten"/> is the head to give Kestrel instead, for
    /// <see cref="FrontAction.Rewrite"/>. A head with anything else out of the ordinary (a
    /// second Host, a line that is not a field, a version other than HTTP/1.x) is left to
    /// Kestrel's own answer.
    /// </summary>
    public static FrontAction Decide(ReadOnlySpan<byte> head, out byte[]? rewritten)
    {
        rewritten = null;
        var lineEnd = head.IndexOf("\r\n"u8);
        var line = head[..lineEnd];
        var method = line.IndexOf((byte)' ');
        var version = line.LastIndexOf((byte)' ');
        if (method <= 0 || version <= method || !(line[(version + 1)..].SequenceEqual("HTTP/1.1"u8) || line[(version + 1)..].SequenceEqual("HTTP/1.0"u8)))
        {
            return FrontAction.None;
        }

        var target = line[(method + 1)..version];
        var connect = line[..method].SequenceEqual("CONNECT"u8);
        if (!connect && (target.IsEmpty || target[0] != '/'))
        {
            // Another form's Host is compared with its target by Kestrel (RFC 9112 §3.2.2);
            // absolute-form is AllowHostHeaderOverride's to settle.
            return FrontAction.None;
        }

        var hosts = 0;
        var hostLine = 0..0;
        var form = HostForm.Invalid;
        var at = lineEnd + 2;
        while (head[at..].IndexOf("\r\n"u8) is var end and > 0)
        {
            var field = head.Slice(at, end);
            if (!IsField(field))
            {
                return FrontAction.None;
            }

            if (HostValue(field, out var value))
            {
                hosts++;
                hostLine = at..(at + end);
                form = HostSyntax.Classify(value);
            }

            at += end + 2;
        }

        if (hosts != 1 || form == HostForm.Invalid)
        {
            // RFC 9112 §3.2: a 400, Kestrel's or the pipeline's (RequestChecks).
            return FrontAction.None;
        }

        if (connect)
        {
            return HostSyntax.IsAuthorityForm(target) ? FrontAction.RefuseConnect : FrontAction.None;
        }

        if (form == HostForm.Accepted)
        {
            return FrontAction.None;
        }

        HostValue(head[hostLine], out var host);
        var kept = form == HostForm.EmptyPort ? host[..^1] : [];
        var closeLine = "Connection: close\r\n"u8;
        var bytes = new byte[hostLine.Start.Value + "Host: "u8.Length + kept.Length + (head.Length - 2 - hostLine.End.Value) + closeLine.Length + 2];
        var written = 0;
        Append(bytes, ref written, head[..hostLine.Start]);
        Append(bytes, ref written, "Host: "u8);
        Append(bytes, ref written, kept);
        Append(bytes, ref written, head[hostLine.End..^2]);
        Append(bytes, ref written, closeLine);
        Append(bytes, ref written, "\r\n"u8);
        rewritten = bytes;
        return FrontAction.Rewrite;
    }

    /// <summary>The status line and Allow of the 405 for CONNECT, written with Kestrel's framing of an answer that ends the connection.</summary>
    public static ReadOnlySpan<byte> ConnectRefusal => "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"u8;

    private static bool HostValue(ReadOnlySpan<byte> field, out ReadOnlySpan<byte> value)
    {
        if (field.Length >= 5 && field[4] == ':' && Ascii.EqualsIgnoreCase(field[..4], "Host"u8))
        {
            value = field[5..].Trim(" \t"u8);
            return true;
        }

        value = default;
        return false;
    }

    /// <summary>RFC 9112 §5: a token, a colon, a value of visible characters, spaces and tabs.</summary>
    private static bool IsField(ReadOnlySpan<byte> field)
    {
        var colon = field.IndexOf((byte)':');
        return colon > 0 && !field[..colon].ContainsAnyExcept(s_tokenChars) && !field[(colon + 1)..].ContainsAnyExcept(s_fieldChars);
    }

    private static void Append(byte[] bytes, ref int written, ReadOnlySpan<byte> part)
    {
        part.CopyTo(bytes.AsSpan(written));
        written += part.Length;
    }
}
