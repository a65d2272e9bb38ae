using System.Globalization;
using System.Text;

namespace Peregrine.Http1;

/// <summary>
/// The <c>Date</c> header line (RFC 9110 §6.6.1), formatted once a second rather than per
/// response, as Kestrel and nginx do.
/// </summary>
internal static class HttpDate
{
    private static byte[] s_line = Format(DateTimeOffset.UtcNow);
    private static readonly Timer s_timer = new(_ => Volatile.Write(ref s_line, Format(DateTimeOffset.UtcNow)), null, 1000, 1000);

    /// <summary><c>Date: Sat, 21 Nov 2026 20:43:31 GMT</c> and CRLF.</summary>
    public static ReadOnlySpan<byte> Line
    {
        get
        {
            GC.KeepAlive(s_timer);
            return Volatile.Read(ref s_line);
        }
    }

    private static byte[] Format(DateTimeOffset now)
        => Encoding.ASCII.GetBytes("Date: " + now.ToString("r", CultureInfo.InvariantCulture) + "\r\n");
}
