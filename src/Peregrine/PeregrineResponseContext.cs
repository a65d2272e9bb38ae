using Microsoft.AspNetCore.Http;

namespace Peregrine;

/// <summary>
/// What <see cref="PeregrineOptions.OnPrepareResponse"/> is given: the request, with
/// Peregrine's headers already on its response, and the file being answered.
/// </summary>
/// <remarks>
/// It holds the file's values, not the index's entry, so that the options namespace uses no
/// stage of the library (docs/architecture.md, "Folders").
/// </remarks>
public sealed class PeregrineResponseContext
{
    internal PeregrineResponseContext(HttpContext context, string path, string physicalPath, long length, DateTimeOffset lastModified, string contentType)
    {
        Context = context;
        Path = path;
        PhysicalPath = physicalPath;
        Length = length;
        LastModified = lastModified;
        ContentType = contentType;
    }

    /// <summary>The request being answered. Headers set on its response are sent with the file.</summary>
    public HttpContext Context { get; }

    /// <summary>The file's path under the root, with a leading slash (<c>/css/site.css</c>).</summary>
    public string Path { get; }

    /// <summary>The file on disk.</summary>
    public string PhysicalPath { get; }

    /// <summary>The file's length in bytes, unencoded.</summary>
    public long Length { get; }

    /// <summary>The file's modification time, in whole seconds, as <c>Last-Modified</c> carries it.</summary>
    public DateTimeOffset LastModified { get; }

    /// <summary>The <c>Content-Type</c> the file is sent with.</summary>
    public string ContentType { get; }
}
