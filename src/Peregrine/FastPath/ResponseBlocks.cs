using System.Globalization;
using System.Text;
using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;

namespace Peregrine.FastPath;

/// <summary>
/// The status line and headers of a 200 and a 304 for one representation, encoded once and
/// reused by every fast-path response: only the Date line and the body are added per request.
/// Each block ends after its last header line; the blank line is written by the sender.
/// </summary>
internal sealed class ResponseBlocks
{
    private ResponseBlocks(byte[] ok, byte[] notModified)
    {
        Ok = ok;
        NotModified = notModified;
    }

    public byte[] Ok { get; }

    public byte[] NotModified { get; }

    /// <summary>The same headers, in the same values, as the middleware sets for this entry.</summary>
    public static ResponseBlocks Create(CatalogEntry entry, Representation representation, StringValues vary, (string Name, StringValues Value)[] extraHeaders, bool serverHeader)
    {
        // A configured header replaces the built-in one of the same name, as in the middleware
        // (which assigns it after Cache-Control) and in Kestrel (which adds no Server then).
        bool Configured(string name) => extraHeaders.Any(h => string.Equals(h.Name, name, StringComparison.OrdinalIgnoreCase));
        var common = new StringBuilder();
        if (serverHeader && !Configured("Server"))
        {
            // Kestrel's AddServerHeader, on unless the host turns it off.
            Line(common, "Server", "Kestrel");
        }

        Line(common, "ETag", representation.ETag);
        Line(common, "Last-Modified", entry.LastModifiedHeader);
        if (!Configured("Cache-Control"))
        {
            Line(common, "Cache-Control", entry.CacheControl);
        }

        Line(common, "Vary", vary);
        foreach (var (name, value) in extraHeaders)
        {
            Line(common, name, value);
        }

        var ok = new StringBuilder("HTTP/1.1 200 OK\r\n");
        Line(ok, "Content-Length", representation.Length.ToString(CultureInfo.InvariantCulture));
        Line(ok, "Content-Type", entry.ContentType);
        Line(ok, "Content-Encoding", representation.ContentEncoding);
        ok.Append(common);
        Line(ok, "Accept-Ranges", "bytes");

        var notModified = new StringBuilder("HTTP/1.1 304 Not Modified\r\n").Append(common);
        return new ResponseBlocks(Encoding.ASCII.GetBytes(ok.ToString()), Encoding.ASCII.GetBytes(notModified.ToString()));
    }

    private static void Line(StringBuilder builder, string name, StringValues value)
    {
        if (value.Count != 0 && !string.IsNullOrEmpty(value[0]))
        {
            builder.Append(name).Append(": ").Append(value.ToString()).Append("\r\n");
        }
    }
}
