using System.Globalization;
using System.Text;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Send;

namespace Peregrine.Http1;

/// <summary>
/// A <see cref="ResponseFields"/> encoded as HTTP/1.1 header blocks, a 200 and a 304, once per
/// representation: only the Date line, Connection and the body are added per request (and for
/// a 206, its status line, Content-Length and Content-Range before the 200's fields). The
/// fields are the response's own list; the framing around them (status line, Content-Length,
/// Server) is written as Kestrel writes it. Each block ends after its last header line; the
/// blank line is written by the sender.
/// </summary>
internal sealed class ResponseBlocks
{
    private ResponseBlocks(byte[] ok, int fieldsStart, byte[] notModified)
    {
        Ok = ok;
        FieldsStart = fieldsStart;
        NotModified = notModified;
    }

    public byte[] Ok { get; }

    /// <summary>
    /// Where <see cref="Ok"/>'s fields start after its status line and Content-Length: what a
    /// 206 of the representation carries besides its own status line, Content-Length and
    /// Content-Range, as the middleware's <c>SendRange</c> writes it.
    /// </summary>
    public int FieldsStart { get; }

    public byte[] NotModified { get; }

    // The representation's bytes in a copy that cannot change (a sealed memory file, or for a
    // large body a read-only unnamed file in the page cache), made the first time a cleartext
    // connection sends them (SocketOutput); refused once, never tried again.
    private FileBody? _sealedCopy;
    private bool _sealRefused;

    // The representation's private copy on disk, opened the first time a cleartext connection
    // sends it and kept open for the representation's life (as nginx's open_file_cache keeps
    // descriptors); refused once (the copy gone or changed), never tried again.
    private FileBody? _diskCopy;
    private bool _diskCopyRefused;

    /// <summary>
    /// The representation's private copy at <paramref name="path"/> (Sources/VersionCopies), open,
    /// once it has been found to hold the version: <paramref name="length"/> bytes and, for the
    /// identity, the indexed time, the check the middleware makes before it reads one. Null when
    /// it does not, or the files open for sending leave no room.
    /// </summary>
    public FileBody? DiskCopy(string path, long length, long? lastWriteTicks)
    {
        if (_diskCopy is { } opened || _diskCopyRefused)
        {
            return _diskCopy;
        }

        if (FileSender.TryOpen(path, length, lastWriteTicks) is not { } handle)
        {
            _diskCopyRefused = true;
            return null;
        }

        opened = FileBody.TryAdopt(handle, length);
        if (opened is null)
        {
            return null;
        }

        var kept = Interlocked.CompareExchange(ref _diskCopy, opened, null);
        if (kept is not null)
        {
            opened.Dispose();
            return kept;
        }

        return opened;
    }

    /// <summary>True once <see cref="DiskCopy"/> has opened the copy.</summary>
    internal bool HasDiskCopy => _diskCopy is not null;

    /// <summary>True once <see cref="SealedCopy"/> has made the copy.</summary>
    internal bool HasSealedCopy => _sealedCopy is not null;

    /// <summary>
    /// <paramref name="content"/>, the representation's bytes, in a copy that cannot change for
    /// sendfile(2) (<see cref="FileBody.TryCreate"/>): made on first use and kept for the
    /// representation's life; null where no such copy is to be had.
    /// </summary>
    public FileBody? SealedCopy(byte[] content)
    {
        if (_sealedCopy is { } made || _sealRefused)
        {
            return _sealedCopy;
        }

        made = FileBody.TryCreate(content);
        if (made is null)
        {
            // Refused by the system, not tried again; refused for want of room among the copies,
            // tried again on a later request, once others may have gone.
            _sealRefused = !FileBody.AtCapacity(content.Length);
            return null;
        }

        // A race makes two copies and keeps one; the other's descriptor is closed now.
        var kept = Interlocked.CompareExchange(ref _sealedCopy, made, null);
        if (kept is not null)
        {
            made.Dispose();
            return kept;
        }

        return made;
    }

    /// <summary>The blocks for <paramref name="representation"/>, encoded on first use and kept on it.</summary>
    public static ResponseBlocks For(CatalogEntry entry, Representation representation, ConfiguredHeaders configured, bool serverHeader)
    {
        if (representation.SenderState is ResponseBlocks blocks)
        {
            return blocks;
        }

        // Set once; a race makes two equal blocks and keeps one.
        blocks = Create(ResponseFields.For(entry, representation, configured), representation.Length, serverHeader);
        representation.SenderState = blocks;
        return blocks;
    }

    /// <param name="response">The fields.</param>
    /// <param name="length">The representation's length, the 200's Content-Length.</param>
    /// <param name="serverHeader">Kestrel's <c>AddServerHeader</c>: Kestrel adds <c>Server: Kestrel</c>
    /// unless the response already has a Server field.</param>
    public static ResponseBlocks Create(ResponseFields response, long length, bool serverHeader)
    {
        var server = serverHeader && !response.Entity.Any(h => string.Equals(h.Name, HeaderNames.Server, StringComparison.OrdinalIgnoreCase));
        var ok = new StringBuilder("HTTP/1.1 200 OK\r\n");
        Line(ok, HeaderNames.ContentLength, length.ToString(CultureInfo.InvariantCulture));
        var fieldsStart = ok.Length;
        Fields(ok, response.Content, server);
        Fields(ok, response.Entity, server: false);

        var notModified = new StringBuilder("HTTP/1.1 304 Not Modified\r\n");
        Fields(notModified, response.Entity, server);
        return new ResponseBlocks(Encoding.ASCII.GetBytes(ok.ToString()), fieldsStart, Encoding.ASCII.GetBytes(notModified.ToString()));
    }

    private static void Fields(StringBuilder builder, (string Name, StringValues Value)[] fields, bool server)
    {
        if (server)
        {
            Line(builder, HeaderNames.Server, "Kestrel");
        }

        foreach (var (name, value) in fields)
        {
            Line(builder, name, value);
        }
    }

    private static void Line(StringBuilder builder, string name, StringValues value)
        => builder.Append(name).Append(": ").Append(value.ToString()).Append("\r\n");
}
