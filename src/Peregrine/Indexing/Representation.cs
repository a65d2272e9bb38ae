using Microsoft.Extensions.Primitives;

namespace Peregrine.Indexing;

/// <summary>
/// One representation of a file (RFC 9110 §3.2): the identity bytes or one encoding of them,
/// with every header value it needs made ready before any request arrives.
/// </summary>
internal sealed class Representation
{
    public Representation(ContentCoding coding, long length, string etag, byte[]? content, string? physicalPath)
    {
        if (content is null && physicalPath is null)
        {
            throw new ArgumentException("A representation needs its bytes in memory or a file to read them from.");
        }

        Coding = coding;
        Length = length;
        ETag = etag;
        ContentTag = etag;
        Content = content;
        PhysicalPath = physicalPath;
        ContentEncoding = coding switch
        {
            ContentCoding.Brotli => "br",
            ContentCoding.Zstd => "zstd",
            ContentCoding.Gzip => "gzip",
            ContentCoding.Dcz => "dcz",
            ContentCoding.Dcb => "dcb",
            _ => StringValues.Empty,
        };
    }

    public ContentCoding Coding { get; }

    /// <summary>The byte count of this representation; its Content-Length on a 200.</summary>
    public long Length { get; }

    /// <summary>
    /// The strong entity tag, quotes included, as sent in the ETag header and compared by every
    /// precondition: <see cref="ContentTag"/>, or the one the static web assets manifest states
    /// for these same bytes (<see cref="WithTag"/>).
    /// </summary>
    public StringValues ETag { get; private init; }

    /// <summary>
    /// Peregrine's own tag for the bytes (<see cref="EntityTag"/>): what compression and the
    /// index compare to know the content, whatever tag is sent.
    /// </summary>
    public string ContentTag { get; private init; }

    /// <summary>
    /// A representation of the same bytes that is sent with <paramref name="etag"/>: its own
    /// object, because each representation keeps the header fields made for it.
    /// </summary>
    public Representation WithTag(string etag)
        => new(Coding, Length, ContentTag, Content, PhysicalPath) { ETag = etag, ContentEncoding = ContentEncoding };

    /// <summary>
    /// The same bytes sent as they are with <c>Content-Encoding: <paramref name="contentEncoding"/></c>:
    /// a file that is itself an encoding of another (<c>app.css.br</c>, named as a URL by the static
    /// web assets manifest). Its <see cref="Coding"/> stays identity: these bytes are the resource's
    /// only representation, never a variant chosen by Accept-Encoding.
    /// </summary>
    public Representation SentAsEncoded(string contentEncoding)
        => new(Coding, Length, ContentTag, Content, PhysicalPath) { ETag = ETag, ContentEncoding = contentEncoding };

    /// <summary>The Content-Encoding value: empty for identity, unless the bytes are a stored encoding sent as they are (<see cref="SentAsEncoded"/>).</summary>
    public StringValues ContentEncoding { get; private init; }

    /// <summary>The bytes when held in memory; <see langword="null"/> when they are read from disk.</summary>
    public byte[]? Content { get; }

    /// <summary>
    /// The header fields every response for this representation carries, made on first use
    /// (<see cref="ResponseFields.For"/>). Set once; a race makes two equal lists and keeps one.
    /// </summary>
    internal ResponseFields? Response;

    /// <summary>
    /// A sender's own encoding of <see cref="Response"/>, made on first use and owned by that
    /// sender (the HTTP/1.1 fast path keeps its header blocks here). Typed as object so that the
    /// catalog knows no sender; a field rather than a table keyed by representation because a
    /// ConditionalWeakTable lookup would cost each request tens of nanoseconds.
    /// </summary>
    internal object? SenderState;

    /// <summary>The file the bytes are read from when they are not in memory (the source, a sidecar, or a cache file).</summary>
    public string? PhysicalPath { get; }
}
