namespace Peregrine.Sources.Bucket;

/// <summary>The rules for <see cref="BucketOptions"/>, each message naming its option; the server checks its flags with the same ones.</summary>
internal static class BucketOptionsRules
{
    public static IEnumerable<string> Problems(BucketOptions bucket)
    {
        if (UriProblem(bucket.Uri) is { } uri)
        {
            yield return $"Bucket.Uri: {uri}";
        }

        if (bucket.Pointer is { } pointer && PointerProblem(pointer) is { } problem)
        {
            yield return $"Bucket.Pointer: {problem}";
        }

        if (bucket.PollInterval < TimeSpan.Zero)
        {
            yield return $"Bucket.PollInterval: {bucket.PollInterval} must be zero (off) or more.";
        }

        if (bucket.Downloads is < 1 or > 64)
        {
            yield return $"Bucket.Downloads: {bucket.Downloads} must be from 1 to 64.";
        }

        if (bucket.ServiceUrl is { } url && ServiceUrlProblem(url) is { } urlProblem)
        {
            yield return $"Bucket.ServiceUrl: {urlProblem}";
        }
        else if (BucketClient.SetupProblem(bucket, Environment.GetEnvironmentVariable) is { } setup)
        {
            yield return $"Bucket: {setup}";
        }
    }

    public static string? UriProblem(string? uri)
        => string.IsNullOrWhiteSpace(uri) ? "an s3://BUCKET/PREFIX address is required." : BucketLocation.TryParse(uri, out var problem) is null ? problem : null;

    /// <summary>A pointer is one object's name under the prefix: one plain segment.</summary>
    public static string? PointerProblem(string pointer)
        => BucketPaths.IsSegment(pointer) && pointer != "releases" ? null : $"'{pointer}' must be one plain name (no '/', not 'releases'), such as 'current'.";

    public static string? ServiceUrlProblem(string url)
        => System.Uri.TryCreate(url, UriKind.Absolute, out var parsed) && parsed.Scheme is "http" or "https"
            ? null
            : $"'{url}' must be an absolute http:// or https:// URL.";
}
