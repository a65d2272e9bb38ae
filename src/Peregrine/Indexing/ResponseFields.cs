using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Peregrine.Fields;

namespace Peregrine.Indexing;

/// <summary>
/// The header fields of a response for one representation, decided before any request: the one
/// list every sender uses. The middleware writes it through Kestrel's header dictionary; the
/// HTTP/1.1 fast path encodes the same list into its header blocks; the 404 page and the
/// fresh-version path use lists made the same way (<see cref="ForErrorPage"/>,
/// <see cref="WithValidators"/>). A change to what a file response carries goes here, and
/// reaches every sender.
/// </summary>
/// <remarks>
/// Framing stays with each sender: Content-Length, Date, Server and Connection are Kestrel's
/// (or the fast path's, written as Kestrel writes them). The fields that depend on the
/// request's Origin are added by <see cref="WriteEntity"/> from <see cref="ConfiguredHeaders.AddCors"/>.
/// </remarks>
internal sealed class ResponseFields
{
    private static readonly StringValues s_noCache = "no-cache";
    private static readonly StringValues s_bytes = "bytes";

    /// <summary>RFC 9842 §2.1's response field, not among ASP.NET Core's known names.</summary>
    public const string UseAsDictionaryName = "Use-As-Dictionary";

    private readonly ConfiguredHeaders _configured;

    private ResponseFields((string Name, StringValues Value)[] entity, (string Name, StringValues Value)[] content, bool cacheControlConfigured, ConfiguredHeaders configured)
    {
        Entity = entity;
        Content = content;
        CacheControlConfigured = cacheControlConfigured;
        _configured = configured;
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

    /// <summary>The fields for <paramref name="representation"/>, made on first use and kept on it.</summary>
    public static ResponseFields For(CatalogEntry entry, Representation representation, ConfiguredHeaders configured)
        => representation.Response ??= Create(entry, representation, configured);

    public static ResponseFields Create(CatalogEntry entry, Representation representation, ConfiguredHeaders configured)
        => Build(configured, entry.UseAsDictionary.Count != 0 ? configured.VaryDictionary : configured.VaryFor(entry.VariesByEncoding),
            representation.ETag, entry.LastModifiedHeader, entry.CacheControl, entry.ContentType, representation.ContentEncoding, s_bytes,
            entry.UseAsDictionary);

    /// <summary>
    /// The fields of a 404 page (<c>Fallback/NotFoundPage</c>): its type and coding, Vary, and
    /// <c>no-cache</c>, then the configured headers as for a file; no validators and no
    /// Accept-Ranges, so that no cache turns the page into a 304 or a 206.
    /// </summary>
    public static ResponseFields ForErrorPage(StringValues contentType, StringValues contentEncoding, StringValues vary, ConfiguredHeaders configured)
        => Build(configured, vary, default, default, s_noCache, contentType, contentEncoding, default);

    /// <summary>
    /// These fields with the validators of another version of the file: the one read from disk
    /// when the indexed version is gone (<c>Send/BodySender</c>), so that the body and its ETag
    /// and date describe one version. Made per such response, which is rare.
    /// </summary>
    public ResponseFields WithValidators(StringValues etag, StringValues lastModified)
    {
        var entity = new List<(string Name, StringValues Value)>(Entity);
        Set(entity, HeaderNames.ETag, etag);
        Set(entity, HeaderNames.LastModified, lastModified);
        return new ResponseFields([.. entity], Content, CacheControlConfigured, _configured);
    }

    /// <summary>
    /// Writes <see cref="Entity"/>, then the CORS fields this request calls for.
    /// <paramref name="cacheControl"/>, when given, is the Cache-Control chosen for this request
    /// instead of the entry's (an SPA fallback's <c>no-cache</c>); a configured Cache-Control
    /// still wins over it.
    /// </summary>
    public void WriteEntity(HttpRequest request, IHeaderDictionary headers, StringValues cacheControl = default)
    {
        foreach (var (name, value) in Entity)
        {
            headers[name] = value;
        }

        if (cacheControl.Count != 0 && !CacheControlConfigured)
        {
            headers.CacheControl = cacheControl;
        }

        _configured.AddCors(request, headers);
    }

    /// <summary>Writes <see cref="Content"/>, for a response that carries the representation's bytes.</summary>
    public void WriteContent(IHeaderDictionary headers)
    {
        foreach (var (name, value) in Content)
        {
            headers[name] = value;
        }
    }

    private static ResponseFields Build(ConfiguredHeaders configured, StringValues vary, StringValues etag, StringValues lastModified,
        StringValues cacheControl, StringValues contentType, StringValues contentEncoding, StringValues acceptRanges, StringValues useAsDictionary = default)
    {
        var entity = new List<(string Name, StringValues Value)>(9);
        Add(entity, HeaderNames.Vary, vary);
        Add(entity, HeaderNames.ETag, etag);
        Add(entity, HeaderNames.LastModified, lastModified);
        Add(entity, HeaderNames.CacheControl, cacheControl);

        // RFC 9842 §2.1: on every representation, a delta included (the browser keeps the
        // decoded bytes, the dictionary for the next version), and on 304s, which refresh it.
        Add(entity, UseAsDictionaryName, useAsDictionary);
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
        Add(content, HeaderNames.ContentType, contentType);
        Add(content, HeaderNames.ContentEncoding, contentEncoding);
        Add(content, HeaderNames.AcceptRanges, acceptRanges);
        return new ResponseFields([.. entity], [.. content], cacheControlConfigured, configured);
    }

    private static void Add(List<(string Name, StringValues Value)> fields, string name, StringValues value)
    {
        if (value.Count != 0 && !string.IsNullOrEmpty(value[0]))
        {
            fields.Add((name, value));
        }
    }

    // Replaces the field of that name where it is (a configured one included), or adds it.
    private static void Set(List<(string Name, StringValues Value)> fields, string name, StringValues value)
    {
        var existing = fields.FindIndex(h => string.Equals(h.Name, name, StringComparison.OrdinalIgnoreCase));
        if (existing >= 0)
        {
            fields[existing] = (name, value);
        }
        else
        {
            fields.Add((name, value));
        }
    }
}
