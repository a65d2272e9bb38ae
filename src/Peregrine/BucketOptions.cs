namespace Peregrine;

/// <summary>
/// An S3-compatible bucket (AWS S3, Ceph RGW, MinIO, Cloudflare R2 and others) as the site: its
/// objects are copied into a folder of the server's own, and served from there as a local root is.
/// Nothing on the request path reaches the bucket. See docs/deployment.md, "Serving from a bucket".
/// </summary>
/// <remarks>
/// <para>
/// Plain data, kept in the library so that the options and their binding from configuration keep
/// one shape; the source that reads the bucket is the Peregrine.AspNetCore.Buckets package
/// (<c>services.AddPeregrineBuckets()</c>), which carries the AWS SDK.
/// </para>
/// <para>
/// Credentials, region and endpoint come from the AWS SDK's standard chain: the variables
/// <c>AWS_ACCESS_KEY_ID</c>, <c>AWS_SECRET_ACCESS_KEY</c>, <c>AWS_SESSION_TOKEN</c>,
/// <c>AWS_REGION</c>, <c>AWS_ENDPOINT_URL_S3</c> or <c>AWS_ENDPOINT_URL</c>, <c>AWS_PROFILE</c> and
/// the shared config and credentials files, then container and instance roles.
/// </para>
/// </remarks>
public sealed class BucketOptions
{
    /// <summary>
    /// The bucket and the key prefix the site lives under: <c>s3://BUCKET</c> or
    /// <c>s3://BUCKET/PREFIX</c>. Required.
    /// </summary>
    public string Uri { get; set; } = "";

    /// <summary>
    /// The name, under the prefix, of a small object that holds the id of the release to serve
    /// (<c>current</c> holding <c>2026-11-26.1</c> serves the objects under
    /// <c>PREFIX/releases/2026-11-26.1/</c>). A replica switches to a release only once it holds
    /// all of it, so a deploy is atomic for readers. Default: none, and the objects under the
    /// prefix are the site: an upload in progress can then be picked up half done.
    /// </summary>
    public string? Pointer { get; set; }

    /// <summary>
    /// How often to ask the bucket whether the site changed: the pointer object (a conditional
    /// GET), or without one, a listing compared by ETag. Default: 5 s, so that a deploy is served
    /// by every replica within 10 s: it waits up to one interval for the next poll, then for the
    /// copy of what changed and an index. Zero turns polling off (changes then come through
    /// bucket notifications only).
    /// </summary>
    public TimeSpan PollInterval { get; set; } = TimeSpan.FromSeconds(5);

    /// <summary>
    /// The folder under which the server keeps its copy of the bucket, in a folder of its own that
    /// is removed when it stops (and, after a crash, when the next server starts there). The copy
    /// takes as much disk as the site. Default: the system's temporary folder.
    /// </summary>
    public string? CacheDirectory { get; set; }

    /// <summary>
    /// Address objects as <c>https://host/BUCKET/KEY</c> rather than <c>https://BUCKET.host/KEY</c>,
    /// as self-hosted stores (Ceph RGW, MinIO) usually need. Default: <see langword="false"/>.
    /// </summary>
    public bool ForcePathStyle { get; set; }

    /// <summary>
    /// The endpoint, such as <c>http://127.0.0.1:7480</c>, when it is not to come from
    /// <c>AWS_ENDPOINT_URL_S3</c> or <c>AWS_ENDPOINT_URL</c>. Default: none (the SDK's chain, then AWS).
    /// </summary>
    public string? ServiceUrl { get; set; }

    /// <summary>How many objects are downloaded at once while a release is copied. Default: 8.</summary>
    public int Downloads { get; set; } = 8;

    /// <summary>
    /// How many releases before the one in force the compression dictionaries take their earlier
    /// versions from (docs/serving.md, "Compression dictionaries"): set by the core from
    /// <see cref="DictionaryOptions.MaxVersions"/>, 0 when dictionaries are off.
    /// </summary>
    internal int EarlierReleases;

    /// <summary>
    /// Which of a release's files (path under the release, <c>assets/app-1a2b.js</c>) can be a
    /// compression dictionary: set by the core, which alone knows the fingerprint conventions.
    /// </summary>
    internal Func<string, bool>? DictionaryFiles;

    /// <summary>The largest file taken as an earlier version: <see cref="DictionaryOptions.MaxBytes"/>.</summary>
    internal long EarlierMaxBytes;
}
