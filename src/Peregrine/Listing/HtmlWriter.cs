using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Unicode;

namespace Peregrine.Listing;

/// <summary>
/// Writes UTF-8 HTML into a growable buffer. Every string that came from the file system or the
/// request goes through <see cref="Text"/> (HTML-escaped) or <see cref="PathSegment"/>
/// (percent-encoded); only literals in this folder go through <see cref="Raw"/>.
/// </summary>
internal sealed class HtmlWriter
{
    // UnicodeRanges.All keeps "café" readable in the page source instead of "caf&#xE9;". The
    // encoder still escapes < > & " ' +, control characters and anything that is not a valid
    // scalar value, which is what makes both element text and quoted attribute values safe.
    private static readonly HtmlEncoder Encoder = HtmlEncoder.Create(UnicodeRanges.All);

    // Names are at most 255 bytes on every common file system; larger input rents from the pool.
    private const int StackLimit = 1024;

    private readonly ArrayBufferWriter<byte> _buffer;

    public HtmlWriter(int initialCapacity) => _buffer = new ArrayBufferWriter<byte>(initialCapacity);

    /// <summary>Returns <paramref name="text"/> HTML-escaped as UTF-8, for text written many times.</summary>
    public static byte[] Escape(string text)
    {
        var writer = new HtmlWriter(text.Length + 16);
        writer.Text(text);
        return writer.ToArray();
    }

    /// <summary>The bytes written so far, copied into an array of exactly their length.</summary>
    public byte[] ToArray() => _buffer.WrittenSpan.ToArray();

    /// <summary>Writes trusted markup as is.</summary>
    public void Raw(ReadOnlySpan<byte> utf8) => _buffer.Write(utf8);

    /// <summary>Writes untrusted text HTML-escaped, safe in element content and quoted attributes.</summary>
    public void Text(ReadOnlySpan<char> text)
    {
        byte[]? rented = null;
        var maxBytes = Encoding.UTF8.GetMaxByteCount(text.Length);
        var utf8 = maxBytes <= StackLimit ? stackalloc byte[StackLimit] : (rented = ArrayPool<byte>.Shared.Rent(maxBytes));

        // Lone surrogates become U+FFFD here, so the encoder below only ever sees valid UTF-8.
        var length = Encoding.UTF8.GetBytes(text, utf8);
        Escape(utf8[..length]);

        if (rented is not null)
        {
            ArrayPool<byte>.Shared.Return(rented);
        }
    }

    /// <summary>
    /// Writes one path segment percent-encoded by RFC 3986 §2.1 rules: everything but unreserved
    /// characters is escaped, so '#', '?', '%', '/', ':' and spaces in a name cannot end the path,
    /// start a query or fragment, or make a relative reference look like a scheme. The output is
    /// ASCII without &amp; or quotes, so it needs no HTML escaping.
    /// </summary>
    public void PathSegment(ReadOnlySpan<char> segment)
    {
        // A UTF-16 unit becomes at most three UTF-8 bytes, each written as "%XX".
        char[]? rented = null;
        var maxChars = segment.Length * 9;
        var escaped = maxChars <= StackLimit ? stackalloc char[StackLimit] : (rented = ArrayPool<char>.Shared.Rent(maxChars));

        // Cannot fail: the destination is large enough for any input.
        Uri.TryEscapeDataString(segment, escaped, out var written);
        var destination = _buffer.GetSpan(written);
        Ascii.FromUtf16(escaped[..written], destination, out var bytes);
        _buffer.Advance(bytes);

        if (rented is not null)
        {
            ArrayPool<char>.Shared.Return(rented);
        }
    }

    /// <summary>Writes an integer in invariant culture.</summary>
    public void Number(long value)
    {
        var destination = _buffer.GetSpan(20);
        value.TryFormat(destination, out var written, default, CultureInfo.InvariantCulture);
        _buffer.Advance(written);
    }

    /// <summary>Writes a number with a fixed format in invariant culture.</summary>
    public void Number(double value, ReadOnlySpan<char> format)
    {
        var destination = _buffer.GetSpan(32);
        value.TryFormat(destination, out var written, format, CultureInfo.InvariantCulture);
        _buffer.Advance(written);
    }

    /// <summary>Writes a UTC time with a fixed, ASCII-only format.</summary>
    public void Time(DateTime utc, ReadOnlySpan<char> format)
    {
        var destination = _buffer.GetSpan(32);
        utc.TryFormat(destination, out var written, format, CultureInfo.InvariantCulture);
        _buffer.Advance(written);
    }

    private void Escape(ReadOnlySpan<byte> utf8)
    {
        // Most names need no escaping, so ask for their own length first; an escape is at most
        // ten bytes ("&#x10FFFF;"), so the hint always leaves room for progress.
        var sizeHint = utf8.Length + 16;
        while (true)
        {
            var destination = _buffer.GetSpan(sizeHint);
            var status = Encoder.EncodeUtf8(utf8, destination, out var consumed, out var written);
            _buffer.Advance(written);
            if (status != OperationStatus.DestinationTooSmall)
            {
                // Done; with isFinalBlock the encoder replaces invalid data rather than stopping.
                return;
            }

            utf8 = utf8[consumed..];
            sizeHint = Math.Max(sizeHint * 2, utf8.Length + 16);
        }
    }
}
