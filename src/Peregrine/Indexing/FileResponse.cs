using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;

namespace Peregrine.Indexing;

/// <summary>
/// What a response for one representation carries, decided before any request: the one list of
/// header fields both senders use. The middleware writes it through Kestrel's header dictionary; the HTTP/1.1
/// fast path encodes the same list into its header blocks. A change to what a file response
/// carries goes here, and reaches both.
/// </summary>
/// <remarks>
/// Framing stays with each sender: Content-Length, Date, Server and Connection are Kestrel's
/// (or the fast path's, written as Kestrel writes them).
/// </remarks>
internal sealed class FileResponse
{
    private FileResponse((string Name, StringValues Value)[] entity, (string Name, StringValues Value)[] content, bool cacheControlConfigured)
    {
        Entity = entity;
        Content = content;
        CacheControlConfigured = cacheControlConfigured;
    }

    /// <summary>
    /// The fields of every 200, 206, 304 and 412 for the representation (RFC 9110 §15.4.5):
    /// Vary, the validators, Cache-Control and the configured headers, in the order they are
    /// sent. A configured header replaces the built-in one of the same name, once.
    /// </summary>
    public (string Name, StringValues Value)[] Entity { get; }

    /// <summary>The fields a 200 adds for its content: Content-Type, Content-Encoding, Accept-Ranges.</summary>
    public (string Name, StringValues Value)[] Content { get; }

    /// <summary>True when a configured header sets Cache-Control, which then wins over any rule.</summary>
    public bool CacheControlConfigured { get; }

    /// <summary>The response for <paramref name="representation"/>, made on first use and kept on it.</summary>
    public static FileResponse For(CatalogEntry entry, Representation representation, ConfiguredHeaders configured)
        => representation.Response ??= Create(entry, representation, configured);

    public static FileResponse Create(CatalogEntry entry, Representation representation, ConfiguredHeaders configured)
    {
        var entity = new List<(string Name, StringValues Value)>(8);
        Add(entity, HeaderNames.Vary, configured.VaryFor(entry));
        Add(entity, HeaderNames.ETag, representation.ETag);
        Add(entity, HeaderNames.LastModified, entry.LastModifiedHeader);
        Add(entity, HeaderNames.CacheControl, entry.CacheControl);
        var cacheControlConfigured = false;
        foreach (var (name, value) in configured.Extra)
        {
            cacheControlConfigured |= string.Equals(name, HeaderNames.CacheControl, StringComparison.OrdinalIgnoreCase);
            var existing = entity.FindIndex(h => string.Equals(h.Name, name, StringComparison.OrdinalIgnoreCase));
            if (existing >= 0)
            {
                entity.RemoveAt(existing);
            }

            Add(entity, name, value);
        }

        var content = new List<(string Name, StringValues Value)>(3);
        Add(content, HeaderNames.ContentType, entry.ContentType);
        Add(content, HeaderNames.ContentEncoding, representation.ContentEncoding);
        Add(content, HeaderNames.AcceptRanges, "bytes");
        return new FileResponse([.. entity], [.. content], cacheControlConfigured);
    }

    /// <summary>
    /// Writes <see cref="Entity"/>. <paramref name="cacheControl"/>, when given, is the
    /// Cache-Control chosen for this request instead of the entry's (an SPA fallback's
    /// <c>no-cache</c>); a configured Cache-Control still wins over it.
    /// </summary>
    public void WriteEntity(IHeaderDictionary headers, StringValues cacheControl = default)
    {
        foreach (var (name, value) in Entity)
        {
            headers[name] = value;
        }

        if (cacheControl.Count != 0 && !CacheControlConfigured)
        {
            headers.CacheControl = cacheControl;
        }
    }

    /// <summary>Writes <see cref="Content"/>, for a response that carries the representation's bytes.</summary>
    public void WriteContent(IHeaderDictionary headers)
    {
        foreach (var (name, value) in Content)
        {
            headers[name] = value;
        }
    }

    private static void Add(List<(string Name, StringValues Value)> fields, string name, StringValues value)
    {
        if (value.Count != 0 && !string.IsNullOrEmpty(value[0]))
        {
            fields.Add((name, value));
        }
    }
}
