namespace Peregrine.Sources.Bucket;

/// <summary>A bucket and the key prefix under it, from <c>s3://BUCKET/PREFIX</c>.</summary>
/// <param name="Bucket">The bucket's name.</param>
/// <param name="Prefix">The key prefix, empty or ending in <c>/</c>.</param>
internal sealed record BucketLocation(string Bucket, string Prefix)
{
    public const string Scheme = "s3://";

    /// <summary>True for a value that names a bucket rather than a folder.</summary>
    public static bool IsBucketUri(string? value) => value is not null && value.StartsWith(Scheme, StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Parses <c>s3://BUCKET</c> or <c>s3://BUCKET/PREFIX</c>; null, with the reason, for anything
    /// else. The prefix is taken as written (S3 keys are not URL-encoded in this form), with a
    /// <c>/</c> added so that <c>s3://b/site</c> does not take in <c>site-old/</c>.
    /// </summary>
    public static BucketLocation? TryParse(string? value, out string? problem)
    {
        problem = null;
        if (!IsBucketUri(value))
        {
            problem = $"'{value}' is not an s3://BUCKET/PREFIX address.";
            return null;
        }

        var rest = value![Scheme.Length..];
        var slash = rest.IndexOf('/');
        var bucket = slash < 0 ? rest : rest[..slash];
        var prefix = slash < 0 ? "" : rest[(slash + 1)..];
        if (!IsBucketName(bucket))
        {
            problem = $"'{bucket}' is not a bucket name (3 to 63 letters, digits, dots, hyphens or underscores, starting and ending with a letter or digit).";
            return null;
        }

        if (prefix.Length > 0 && prefix[^1] != '/')
        {
            prefix += "/";
        }

        // S3 keys are at most 1,024 bytes; a prefix with a control character, an empty segment or
        // a dot segment names no folder a client could ask for.
        foreach (var segment in prefix.Length == 0 ? [] : prefix[..^1].Split('/'))
        {
            if (!BucketPaths.IsSegment(segment))
            {
                problem = $"the prefix '{prefix}' has an empty, '.' or '..' segment, or a control character.";
                return null;
            }
        }

        if (System.Text.Encoding.UTF8.GetByteCount(prefix) > 512)
        {
            problem = "the prefix is longer than 512 bytes.";
            return null;
        }

        return new BucketLocation(bucket, prefix);
    }

    public override string ToString() => Scheme + Bucket + "/" + Prefix;

    // The rules of AWS's legacy (us-east-1) names, which Ceph and MinIO accept too: anything
    // stricter here would refuse buckets that exist.
    private static bool IsBucketName(string name)
    {
        if (name.Length is < 3 or > 63 || !char.IsAsciiLetterOrDigit(name[0]) || !char.IsAsciiLetterOrDigit(name[^1]))
        {
            return false;
        }

        foreach (var c in name)
        {
            if (!char.IsAsciiLetterOrDigit(c) && c is not ('.' or '-' or '_'))
            {
                return false;
            }
        }

        return true;
    }
}
