using Microsoft.Extensions.Logging;

namespace Peregrine.Sources;

/// <summary>
/// What makes <see cref="PeregrineOptions.Bucket"/> servable: registered by
/// <c>services.AddPeregrineBuckets()</c> from the Peregrine.AspNetCore.Buckets package, which
/// carries the S3 client. Without it, an instance that names a bucket fails validation with the fix
/// named, rather than serving something else.
/// </summary>
internal interface IBucketSourceFactory
{
    /// <summary>The error for a bucket named with no factory registered.</summary>
    const string NotAdded = "Bucket: serving a bucket takes the Peregrine.AspNetCore.Buckets package: add it and call services.AddPeregrineBuckets().";

    /// <summary>The bucket's rules, each message naming its option (<c>Bucket.Uri: ...</c>).</summary>
    IEnumerable<string> Problems(BucketOptions options);

    /// <summary>The source for <paramref name="options"/>, validated; nothing is read from the bucket yet.</summary>
    ICopiedSource Create(BucketOptions options, ILoggerFactory loggerFactory);
}
