using Microsoft.AspNetCore.Http;

namespace Peregrine;

/// <summary>
/// What <see cref="PeregrineOptions.OnPrepareResponse"/> is given: the request, with
/// Peregrine's headers already on its response, and the file being answered.
/// </summary>
/// <remarks>
/// It reads the file through <see cref="IServedFile"/>, which the index's entry implements, so
/// that the options namespace uses no stage of the library (docs/architecture.md, "Folders"),
/// and each value is made only if the callback reads it.
/// </remarks>
public sealed class PeregrineResponseContext
{
    private readonly IServedFile _file;

    internal PeregrineResponseContext(HttpContext context, IServedFile file)
    {
        Context = context;
        _file = file;
    }

    /// <summary>The request being answered. Headers set on its response are sent with the file.</summary>
    public HttpContext Context { get; }

    /// <summary>The file's path under the root, with a leading slash (<c>/css/site.css</c>).</summary>
    public string Path => _file.Path;

    /// <summary>The file on disk.</summary>
    public string PhysicalPath => _file.PhysicalPath;

    /// <summary>The file's length in bytes, unencoded.</summary>
    public long Length => _file.Length;

    /// <summary>The file's modification time, in whole seconds, as <c>Last-Modified</c> carries it.</summary>
    public DateTimeOffset LastModified => _file.LastModified;

    /// <summary>The <c>Content-Type</c> the file is sent with.</summary>
    public string ContentType => _file.ContentType;
}

/// <summary>
/// The file a response is made from, as <see cref="PeregrineResponseContext"/> shows it: read
/// only when the callback asks, so a response pays for no value it does not use.
/// </summary>
internal interface IServedFile
{
    string Path { get; }

    string PhysicalPath { get; }

    long Length { get; }

    DateTimeOffset LastModified { get; }

    string ContentType { get; }
}
