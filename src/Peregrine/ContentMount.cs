namespace Peregrine;

/// <summary>
/// A folder served under a URL path of its own, beside <see cref="PeregrineOptions.Root"/>: the
/// folders of one site that do not live under one root (a class library's assets, a build's
/// output, a shared folder of fonts). Each mount is indexed, watched and served as the root is.
/// </summary>
/// <remarks>
/// Mounts overlay one another. A URL path is served from the first folder that holds it, the
/// folders taken longest <see cref="UrlPath"/> first and, at equal URL paths, <see cref="PeregrineOptions.Root"/>
/// first and then the mounts in the order listed. A path that no folder holds is not served.
/// </remarks>
public sealed class ContentMount
{
    /// <summary>
    /// The URL path the folder's files are served under, below the instance's
    /// <see cref="PeregrineOptions.RequestPath"/>: <c>/</c>, or a path such as <c>/docs</c> that
    /// starts with <c>/</c> and does not end with one. Default: <c>/</c>.
    /// </summary>
    public string UrlPath { get; set; } = "/";

    /// <summary>The folder to serve. Required. A relative path is taken from the current directory.</summary>
    public string Root { get; set; } = "";

    /// <summary>
    /// When set, the only files of <see cref="Root"/> served: paths under it with a leading
    /// slash, such as <c>/css/site.css</c>. Default: <see langword="null"/>, every file.
    /// </summary>
    public IList<string>? Files { get; set; }
}
