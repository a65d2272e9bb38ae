namespace Peregrine.Sources.Bucket;

/// <summary>One object of a listing, as the copy needs it.</summary>
/// <param name="Key">The object's key in the bucket.</param>
/// <param name="RelativePath">Its path under the release, with <c>/</c> between segments.</param>
/// <param name="ETag">The bucket's ETag, quoted as S3 sends it: what tells two versions apart.</param>
/// <param name="Size">Its length in bytes.</param>
/// <param name="LastModified">The listing's time: the Last-Modified every replica sends (<see cref="ListedTimes"/>).</param>
internal sealed record BucketObject(string Key, string RelativePath, string ETag, long Size, DateTime LastModified)
{
    /// <summary>True when <paramref name="other"/> has the same bytes by the bucket's word: same ETag and length.</summary>
    public bool SameContent(BucketObject other) => ETag == other.ETag && Size == other.Size;
}
