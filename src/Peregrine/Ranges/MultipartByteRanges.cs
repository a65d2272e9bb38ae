using System.Buffers.Text;
using System.Diagnostics;
using System.Security.Cryptography;

namespace Peregrine.Ranges;

/// <summary>
/// The framing of a multipart/byteranges body (RFC 9110 §14.6), for a 206 that carries more than
/// one range.
/// </summary>
/// <remarks>
/// <para>The body is written as, for each range,</para>
/// <code>
/// [CRLF] "--" boundary CRLF
/// [ "Content-Type: " type CRLF ]
/// "Content-Range: bytes " first "-" last "/" complete-length CRLF
/// CRLF
/// the range's bytes
/// </code>
/// <para>followed by <c>CRLF "--" boundary "--" CRLF</c>. The CRLF before a delimiter belongs to the
/// delimiter (RFC 2046 §5.1.1), so the first part, which has no preceding body, starts straight
/// at "--"; there is no preamble or epilogue. <see cref="ComputeLength"/> counts exactly the bytes
/// the two Write methods produce plus the ranges themselves, so the response can carry a
/// Content-Length instead of being chunked.</para>
/// <para>Header text is ASCII, one byte per character. The part type and boundary come from the
/// server's own configuration, not from the request; a character outside visible ASCII (a CR or LF
/// above all, which would forge part headers) is a programming error and throws.</para>
/// </remarks>
internal static class MultipartByteRanges
{
    // RFC 2046 §5.1.1 allows 1 to 70 boundary characters; these are the ones that are both bchars
    // and tchars (RFC 9110 §5.6.2), so the boundary parameter never needs quoting.
    private const string BoundaryAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    private const string ExtraBoundaryChars = "'+_-.";
    private const int BoundaryLength = 32;
    private const int MaxBoundaryLength = 70;

    private const string ContentTypePrefix = "Content-Type: ";
    private const string ContentRangePrefix = "Content-Range: bytes ";

    // long.MaxValue has 19 decimal digits.
    private const int MaxPositionDigits = 19;

    /// <summary>
    /// A fresh random boundary: 32 characters from [0-9A-Za-z], 190 bits from a cryptographic
    /// generator, so no file's content can be made to contain it by guessing. One per process is
    /// enough.
    /// </summary>
    public static string NewBoundary() => RandomNumberGenerator.GetString(BoundaryAlphabet, BoundaryLength);

    /// <summary>The response's Content-Type: <c>multipart/byteranges; boundary=...</c> (§14.6).</summary>
    public static string ContentType(string boundary)
    {
        ArgumentNullException.ThrowIfNull(boundary);
        if (boundary.Length is 0 or > MaxBoundaryLength
            || boundary.AsSpan().IndexOfAnyExcept(BoundaryAlphabet + ExtraBoundaryChars) >= 0)
        {
            throw new ArgumentException(
                $"A boundary is 1 to {MaxBoundaryLength} characters of [0-9A-Za-z'+_.-].", nameof(boundary));
        }

        return "multipart/byteranges; boundary=" + boundary;
    }

    /// <summary>
    /// The exact length of the body: every part header, every range's bytes, and the closing
    /// delimiter.
    /// </summary>
    /// <param name="ranges">The ranges in the order they are sent; at least one.</param>
    /// <param name="completeLength">The length of the whole representation.</param>
    /// <param name="partContentType">The representation's Content-Type, repeated in every part as
    /// §14.6 asks; empty to leave it out.</param>
    /// <param name="boundary">The boundary named in the response's Content-Type.</param>
    public static long ComputeLength(ReadOnlySpan<ByteRange> ranges, long completeLength, string partContentType, string boundary)
    {
        if (ranges.IsEmpty)
        {
            throw new ArgumentException("A multipart body has at least one part.", nameof(ranges));
        }

        var total = (long)ClosingLength(boundary);
        for (var i = 0; i < ranges.Length; i++)
        {
            total += PartHeaderLength(i == 0, ranges[i], completeLength, partContentType, boundary) + ranges[i].Length;
        }

        return total;
    }

    /// <summary>
    /// Writes the delimiter and headers that precede one range's bytes.
    /// </summary>
    /// <param name="destination">At least <see cref="MaxPartHeaderLength"/> bytes always suffice.</param>
    /// <param name="first">True for the first part, which has no CRLF before its delimiter.</param>
    /// <param name="range">The range whose bytes follow.</param>
    /// <param name="completeLength">The length of the whole representation.</param>
    /// <param name="partContentType">As for <see cref="ComputeLength"/>.</param>
    /// <param name="boundary">As for <see cref="ComputeLength"/>.</param>
    /// <returns>The number of bytes written.</returns>
    public static int WritePartHeader(
        Span<byte> destination, bool first, ByteRange range, long completeLength, string partContentType, string boundary)
    {
        var length = PartHeaderLength(first, range, completeLength, partContentType, boundary);
        if (destination.Length < length)
        {
            ThrowDestinationTooSmall(nameof(destination));
        }

        var written = 0;
        if (!first)
        {
            Append(destination, ref written, "\r\n");
        }

        Append(destination, ref written, "--");
        AppendConfigured(destination, ref written, boundary);
        Append(destination, ref written, "\r\n");
        if (partContentType.Length > 0)
        {
            Append(destination, ref written, ContentTypePrefix);
            AppendConfigured(destination, ref written, partContentType);
            Append(destination, ref written, "\r\n");
        }

        Append(destination, ref written, ContentRangePrefix);
        Append(destination, ref written, range.Start);
        Append(destination, ref written, "-");
        Append(destination, ref written, range.Last);
        Append(destination, ref written, "/");
        Append(destination, ref written, completeLength);
        Append(destination, ref written, "\r\n\r\n");

        Debug.Assert(written == length, "ComputeLength and WritePartHeader disagree.");
        return written;
    }

    /// <summary>Writes the closing delimiter, <c>CRLF "--" boundary "--" CRLF</c>.</summary>
    /// <returns>The number of bytes written.</returns>
    public static int WriteClosing(Span<byte> destination, string boundary)
    {
        if (destination.Length < ClosingLength(boundary))
        {
            ThrowDestinationTooSmall(nameof(destination));
        }

        var written = 0;
        Append(destination, ref written, "\r\n--");
        AppendConfigured(destination, ref written, boundary);
        Append(destination, ref written, "--\r\n");
        return written;
    }

    /// <summary>
    /// The longest part header <see cref="WritePartHeader"/> can write for this type and boundary,
    /// whatever the positions: size a buffer with it once.
    /// </summary>
    public static int MaxPartHeaderLength(string partContentType, string boundary) =>
        FixedPartHeaderLength(first: false, partContentType, boundary) + (3 * MaxPositionDigits);

    private static int PartHeaderLength(bool first, ByteRange range, long completeLength, string partContentType, string boundary) =>
        FixedPartHeaderLength(first, partContentType, boundary)
        + CountDigits(range.Start) + CountDigits(range.Last) + CountDigits(completeLength);

    // Everything in a part header except the three numbers.
    private static int FixedPartHeaderLength(bool first, string partContentType, string boundary) =>
        (first ? 0 : 2)
        + 2 + boundary.Length + 2
        + (partContentType.Length > 0 ? ContentTypePrefix.Length + partContentType.Length + 2 : 0)
        + ContentRangePrefix.Length + 1 + 1 + 2 + 2;

    private static int ClosingLength(string boundary) => 2 + 2 + boundary.Length + 2 + 2;

    private static int CountDigits(long value)
    {
        Debug.Assert(value >= 0, "Positions and lengths are never negative.");
        var digits = 1;
        while (value >= 10)
        {
            value /= 10;
            digits++;
        }

        return digits;
    }

    // The framing literals of this file, all ASCII.
    private static void Append(Span<byte> destination, ref int written, string literal)
    {
        foreach (var c in literal)
        {
            destination[written++] = (byte)c;
        }
    }

    // The part type and boundary the caller configured.
    private static void AppendConfigured(Span<byte> destination, ref int written, string text)
    {
        foreach (var c in text)
        {
            // Visible ASCII, space and tab: what a field value may hold (RFC 9110 §5.5), one byte
            // each, which is what the length computation assumes. CR and LF above all stay out.
            if (c is not ('\t' or (>= ' ' and <= '~')))
            {
                throw new ArgumentException("The part content type and boundary must be visible ASCII.");
            }

            destination[written++] = (byte)c;
        }
    }

    private static void Append(Span<byte> destination, ref int written, long value)
    {
        var formatted = Utf8Formatter.TryFormat(value, destination[written..], out var bytes);
        Debug.Assert(formatted, "The destination was sized for this number.");
        written += bytes;
    }

    private static void ThrowDestinationTooSmall(string paramName) =>
        throw new ArgumentException("The destination is too small; size it with MaxPartHeaderLength.", paramName);
}
