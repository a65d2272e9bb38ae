using Microsoft.AspNetCore.Http;

namespace Peregrine;

/// <summary>
/// Options for the Peregrine static file middleware. Every value is read once, when the
/// catalog is built; nothing here is consulted per request.
/// </summary>
public sealed class PeregrineOptions
{
    /// <summary>
    /// The folder to serve. Required. A relative path is taken from the current directory.
    /// The folder is indexed at start-up: only files found under it (after resolving symbolic
    /// links) can ever be served.
    /// </summary>
    public string Root { get; set; } = "";

    /// <summary>
    /// Further folders served under URL paths of their own, overlaid on <see cref="Root"/> (see
    /// <see cref="ContentMount"/> for which folder serves a path both hold). Default: none.
    /// </summary>
    public IList<ContentMount> Mounts { get; set; } = [];

    /// <summary>
    /// The routes the static web assets manifests add (an instance that serves the host's web root): fingerprinted
    /// paths that answer with a file under their own Cache-Control, the Cache-Control stated for
    /// files under their own path, and the encoded files that are not URLs of their own. Set
    /// from the host at start-up; empty otherwise. A field, not a property: the configuration
    /// binding generator would try to bind a property.
    /// </summary>
    internal StaticWebAssets.AssetRouteTable Routes = StaticWebAssets.AssetRouteTable.Empty;

    /// <summary>
    /// For a source that states each file's Last-Modified itself (a bucket's listing): given the
    /// folder indexed (its real path) and a file's path under it (<c>/a/b.html</c>), the time in
    /// UTC ticks, or null to take the file's modification time. Set by the source before the
    /// catalog starts; null for a folder. A field of framework types only: the options use no
    /// stage (docs/architecture.md, "Folders").
    /// </summary>
    internal Func<string, string, long?>? ListedLastModified;

    /// <summary>
    /// For a source that keeps a history of releases (a bucket): given the folder indexed (its
    /// real path), the earlier versions of its fingerprinted files that the compression
    /// dictionaries keep, oldest first, as (URL path under the root, <c>/assets/app-1a2b.js</c>;
    /// the file holding its bytes); null for a folder it does not hold. When set, the kept
    /// versions are these and the files in force, and nothing of the process's own history, so
    /// that replicas keep the same ones. Set by the source before the catalog starts.
    /// </summary>
    internal Func<string, IReadOnlyList<KeyValuePair<string, string>>?>? EarlierVersions;

    /// <summary>
    /// The URL path the files are served under, for example <c>/static</c>. Default: empty,
    /// the site root. Must start with <c>/</c> and must not end with one.
    /// </summary>
    public PathString RequestPath { get; set; }

    /// <summary>
    /// File names served for a request to a directory, tried in order. Default:
    /// <c>index.html</c>, <c>index.htm</c>.
    /// </summary>
    public IList<string> DefaultDocuments { get; set; } = ["index.html", "index.htm"];

    /// <summary>
    /// Serve files and folders whose name starts with a dot (<c>.env</c>, <c>.git/</c>).
    /// Default: <see langword="false"/>. The <c>.well-known</c> folder (RFC 8615) is always
    /// served, since its contents are public by definition.
    /// </summary>
    public bool ServeHiddenFiles { get; set; }

    /// <summary>
    /// Serve files whose extension has no known content type, as <see cref="DefaultContentType"/>.
    /// Default: <see langword="true"/>, as nginx and Caddy do.
    /// </summary>
    public bool ServeUnknownFileTypes { get; set; } = true;

    /// <summary>The content type of files with an unknown extension. Default: <c>application/octet-stream</c>.</summary>
    public string DefaultContentType { get; set; } = "application/octet-stream";

    /// <summary>
    /// Extra or replacement content types by extension (with its dot, for example
    /// <c>[".md"] = "text/markdown"</c>). Applied over ASP.NET Core's
    /// <c>FileExtensionContentTypeProvider</c>. Text types get <c>; charset=utf-8</c> unless
    /// they name a charset.
    /// </summary>
    public IDictionary<string, string> ContentTypes { get; set; } = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);

    /// <summary>
    /// The <c>Cache-Control</c> value for ordinary files. Default: <c>no-cache</c>: caches
    /// keep the file but revalidate it on each use, which costs a 304 and never serves a stale
    /// file after a deploy. Empty sends no Cache-Control.
    /// </summary>
    public string CacheControl { get; set; } = "no-cache";

    /// <summary>
    /// The <c>Cache-Control</c> value for files whose name carries a content fingerprint
    /// (<c>app.3f9a1c2b.js</c>, see <see cref="FingerprintedNames"/>). Default:
    /// <c>public, max-age=31536000, immutable</c>.
    /// </summary>
    public string FingerprintedCacheControl { get; set; } = "public, max-age=31536000, immutable";

    /// <summary>
    /// Recognise fingerprinted file names: the part just before the extension, after a dot or a
    /// dash, is 8 or more lower-case hex characters mixing digits and letters
    /// (<c>app.3f9a1c2b.js</c>), or 8 or more base64url characters mixing upper case, lower case
    /// and digits (<c>main-BkQ3x9Zt.css</c>). Default: <see langword="true"/>.
    /// </summary>
    public bool FingerprintedNames { get; set; } = true;

    /// <summary>
    /// Files up to this size are held in memory and sent without touching the disk. Default:
    /// 1 MiB. Larger files are streamed from disk.
    /// </summary>
    public long MaxCachedFileSize { get; set; } = 1024 * 1024;

    /// <summary>
    /// Files up to this size get a content-hash ETag at index time. Larger files get a tag
    /// from their length and modification time instead (as nginx does), so that indexing a
    /// 30 GB file does not read 30 GB. Default: 64 MiB.
    /// </summary>
    public long MaxHashedFileSize { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// The most bytes held in memory for files, all files together: their content and their
    /// compressed variants. Default: 256 MiB. Smaller files are kept first; files that do not fit
    /// are streamed from disk, and variants that do not fit are read from their sidecar or cache
    /// file, or not made.
    /// </summary>
    public long MemoryBudget { get; set; } = 256L * 1024 * 1024;

    /// <summary>
    /// Cache-Control by path: the first rule whose glob matches a file's path under the root
    /// (<c>*.html</c>, <c>assets/**</c>, <c>**/*.woff2</c>; <c>*</c> stays within a folder,
    /// <c>**</c> crosses folders, a glob without a slash matches the file name in any folder)
    /// sets its Cache-Control, ahead of the fingerprint rule and the default. Default: none.
    /// </summary>
    public IList<CacheRule> CacheRules { get; set; } = [];

    /// <summary>
    /// Response headers added to every file response (200, 206, 304), for example
    /// <c>X-Content-Type-Options: nosniff</c> or a Content-Security-Policy. Default: none.
    /// </summary>
    public IDictionary<string, string> Headers { get; set; } = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);

    /// <summary>
    /// Origins allowed to read files cross-origin (CORS): <c>*</c> for any, or exact origins
    /// such as <c>https://app.example.com</c>. Default: none (no CORS headers).
    /// </summary>
    public IList<string> CorsOrigins { get; set; } = [];

    /// <summary>
    /// A file (path under the root, such as <c>index.html</c>) served for navigations that
    /// match no file: a GET or HEAD that accepts <c>text/html</c> (or says
    /// <c>Sec-Fetch-Mode: navigate</c>) for a path without a file extension, as single-page
    /// applications with client-side routing need. It is sent with
    /// <c>Cache-Control: no-cache</c>; a missing asset (<c>/app.3f9a1c.js</c>) still goes on
    /// to the next middleware. Default: none.
    /// </summary>
    public string? SpaFallback { get; set; }

    /// <summary>
    /// A file (path under the root, such as <c>404.html</c>) sent as the body of a 404 for a
    /// navigation: a GET or HEAD that accepts <c>text/html</c> or says
    /// <c>Sec-Fetch-Mode: navigate</c>, under the mount point, that matches no file and that the
    /// next middleware answers with an empty 404. It goes with status 404,
    /// <c>Cache-Control: no-cache</c>, no validators, and the Content-Encoding negotiated as for
    /// any file. Other 404s are left as they are. Default: none (the standalone server uses
    /// <c>404.html</c> when the root has one).
    /// </summary>
    public string? NotFoundPage { get; set; }

    /// <summary>
    /// When the root has no <see cref="NotFoundPage"/> file, send a small built-in HTML page in
    /// its place, so that a browser shows the site's 404 rather than its own error page for an
    /// empty one. Set by the standalone server; an application keeps its 404s as they are.
    /// </summary>
    internal bool BuiltInNotFoundPage { get; set; }

    /// <summary>
    /// Clean URLs: <c>/about</c> serves <c>about.html</c> when nothing named <c>about</c>
    /// exists, and <c>/about.html</c> redirects there with 308 (query kept); a folder's default
    /// document (<c>/docs/index.html</c>) redirects to the folder (<c>/docs/</c>). Decided when
    /// the root is indexed. Default: <see langword="false"/>.
    /// </summary>
    public bool CleanUrls { get; set; }

    /// <summary>
    /// List the contents of folders that have no default document, as HTML (or JSON for
    /// <c>Accept: application/json</c>). Hidden files are never listed. Default: <see langword="false"/>.
    /// </summary>
    public bool DirectoryListing { get; set; }

    /// <summary>
    /// Called for each file response after Peregrine has written its headers and before the
    /// status is decided, so that it can add or change headers (the shape of
    /// <c>StaticFileOptions.OnPrepareResponse</c>). It runs on the middleware path only: while it
    /// is set, the HTTP/1.1 fast path hands every request to the pipeline. Default: none.
    /// </summary>
    public Action<PeregrineResponseContext>? OnPrepareResponse { get; set; }

    /// <summary>Watching the root for changes and redeploys.</summary>
    public WatchOptions Watch { get; set; } = new();

    /// <summary>Compression of files in the background after each index, and Accept-Encoding negotiation.</summary>
    public CompressionOptions Compression { get; set; } = new();

    /// <summary>
    /// Serve an S3-compatible bucket instead of a folder: its objects are copied into a folder of
    /// the server's own, which becomes <see cref="Root"/> (leave Root empty). Needs the
    /// Peregrine.AspNetCore.Buckets package and <c>services.AddPeregrineBuckets()</c>, without which
    /// validation fails. Default: none.
    /// </summary>
    public BucketOptions? Bucket { get; set; }
}
