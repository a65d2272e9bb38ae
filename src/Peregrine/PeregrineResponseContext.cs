using Microsoft.AspNetCore.Http;
using Peregrine.Indexing;

namespace Peregrine;

/// <summary>
/// What <see cref="PeregrineOptions.OnPrepareResponse"/> is given: the request, with
/// Peregrine's headers already on its response, and the file being answered.
/// </summary>
public sealed class PeregrineResponseContext
{
    private readonly CatalogEntry _entry;

    internal PeregrineResponseContext(HttpContext context, CatalogEntry entry)
    {
        Context = context;
        _entry = entry;
    }

    /// <summary>The request being answered. Headers set on its response are sent with the file.</summary>
    public HttpContext Context { get; }

    /// <summary>The file's path under the root, with a leading slash (<c>/css/site.css</c>).</summary>
    public string Path => _entry.RelativePath;

    /// <summary>The file on disk.</summary>
    public string PhysicalPath => _entry.PhysicalPath;

    /// <summary>The file's length in bytes, unencoded.</summary>
    public long Length => _entry.Identity.Length;

    /// <summary>The file's modification time, in whole seconds, as <c>Last-Modified</c> carries it.</summary>
    public DateTimeOffset LastModified => _entry.LastModified;

    /// <summary>The <c>Content-Type</c> the file is sent with.</summary>
    public string ContentType => _entry.ContentType.ToString();
}
