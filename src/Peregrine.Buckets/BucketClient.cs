using System.Net;
using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// The three things the copy asks of a bucket (list a prefix, read the pointer, download one
/// object) through the AWS SDK, with the SDK's standard chain for credentials, region and endpoint.
/// </summary>
internal sealed class BucketClient : IDisposable
{
    // A download or listing page that has not finished in this long is abandoned and retried: a
    // stalled connection must not hold a sync, and so a deploy, for ever.
    private static readonly TimeSpan s_requestTimeout = TimeSpan.FromSeconds(30);

    private readonly AmazonS3Client _s3;

    private BucketClient(AmazonS3Client s3, BucketLocation location, string endpoint)
    {
        _s3 = s3;
        Location = location;
        Endpoint = endpoint;
    }

    public BucketLocation Location { get; }

    /// <summary>Where requests go, for messages: the configured endpoint, or AWS's for the region.</summary>
    public string Endpoint { get; }

    public static BucketClient Create(BucketOptions options)
    {
        var location = BucketLocation.TryParse(options.Uri, out var problem) ?? throw new InvalidOperationException($"Bucket.Uri: {problem}");
        var config = new AmazonS3Config
        {
            ForcePathStyle = options.ForcePathStyle,

            // Only what S3 requires: stores other than AWS (Ceph RGW among them) refuse the
            // checksums the SDK would add by default (400 XAmzContentSHA256Mismatch). Each
            // download's length is checked against the listing instead.
            RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
            ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,

            // The standard mode backs off with jitter on throttling (503 SlowDown) and 5xx; the
            // source backs off again between whole syncs (BucketSource).
            RetryMode = RequestRetryMode.Standard,
            MaxErrorRetry = 4,
            Timeout = s_requestTimeout,
            HttpClientFactory = new BucketHttp(s_requestTimeout),
        };

        var serviceUrl = ServiceUrl(options, Environment.GetEnvironmentVariable);
        if (FallbackRegionFactory.GetRegionEndpoint() is { } region)
        {
            config.RegionEndpoint = region;
        }
        else if (serviceUrl is not null)
        {
            // A self-hosted store with no region configured: sign for the one most of them accept.
            config.AuthenticationRegion = "us-east-1";
        }

        if (serviceUrl is not null)
        {
            // Set after the region, which would otherwise replace it.
            config.ServiceURL = serviceUrl;
        }

        var endpoint = serviceUrl ?? $"AWS S3 ({config.RegionEndpoint?.SystemName ?? "no region set"})";
        return new BucketClient(new AmazonS3Client(config), location, endpoint);
    }

    /// <summary>
    /// Why no client can be made, or null: with neither a region (for AWS) nor an endpoint (for
    /// another store), the SDK has nowhere to send a request.
    /// </summary>
    /// <param name="options">The bucket's options.</param>
    /// <param name="variable">Reads an environment variable (the server reads its own copy of the environment).</param>
    public static string? SetupProblem(BucketOptions options, Func<string, string?> variable)
        => ServiceUrl(options, variable) is null && FallbackRegionFactory.GetRegionEndpoint() is null
            ? "no region and no endpoint: set AWS_REGION (or a profile's region) for AWS S3, or AWS_ENDPOINT_URL_S3 for another store."
            : null;

    /// <summary>The endpoint given, in the options or the SDK's variables; null for AWS's.</summary>
    private static string? ServiceUrl(BucketOptions options, Func<string, string?> variable)
        => options.ServiceUrl
            ?? (variable("AWS_ENDPOINT_URL_S3") is { Length: > 0 } s3Url ? s3Url
            : variable("AWS_ENDPOINT_URL") is { Length: > 0 } url ? url
            : null);

    /// <summary>Every object under <paramref name="prefix"/>, page by page (ListObjectsV2, 1,000 keys a page).</summary>
    public async Task<List<S3Object>> ListAsync(string prefix, CancellationToken cancellationToken)
    {
        var objects = new List<S3Object>();
        var request = new ListObjectsV2Request { BucketName = Location.Bucket, Prefix = prefix };
        while (true)
        {
            var page = await _s3.ListObjectsV2Async(request, cancellationToken).ConfigureAwait(false);
            if (page.S3Objects is { } items)
            {
                objects.AddRange(items);
            }

            if (page.IsTruncated != true || string.IsNullOrEmpty(page.NextContinuationToken))
            {
                return objects;
            }

            request.ContinuationToken = page.NextContinuationToken;
        }
    }

    /// <summary>
    /// The pointer object's text and ETag; <see langword="null"/> when it still has
    /// <paramref name="knownETag"/> (a conditional GET, RFC 9110 §13.1.2, answered 304).
    /// </summary>
    /// <exception cref="BucketChangedException">The pointer object does not exist.</exception>
    public async Task<(string Text, string ETag)?> ReadPointerAsync(string key, string? knownETag, CancellationToken cancellationToken)
    {
        var request = new GetObjectRequest { BucketName = Location.Bucket, Key = key, EtagToNotMatch = knownETag };
        try
        {
            using var response = await _s3.GetObjectAsync(request, cancellationToken).ConfigureAwait(false);
            if (response.HttpStatusCode == HttpStatusCode.NotModified)
            {
                return null;
            }

            if (response.ContentLength > 1024)
            {
                throw new InvalidDataException($"the pointer object {key} holds {response.ContentLength} bytes; it should hold a release id.");
            }

            using var reader = new StreamReader(response.ResponseStream);
            var text = await reader.ReadToEndAsync(cancellationToken).ConfigureAwait(false);
            return (text.Trim(), response.ETag);
        }
        catch (AmazonS3Exception ex) when (ex.StatusCode == HttpStatusCode.NotModified)
        {
            return null;
        }
        catch (AmazonS3Exception ex) when (ex.StatusCode == HttpStatusCode.NotFound)
        {
            throw new BucketChangedException($"the pointer object {key} does not exist.");
        }
    }

    /// <summary>
    /// Downloads <paramref name="item"/> to <paramref name="path"/> (a new file), only at the
    /// version listed (If-Match its ETag), and checks that every byte came.
    /// </summary>
    /// <returns>The bytes written.</returns>
    /// <exception cref="BucketChangedException">The object is gone or changed since it was listed.</exception>
    /// <exception cref="IOException">The body was cut short or too long.</exception>
    public async Task<long> DownloadAsync(BucketObject item, string path, CancellationToken cancellationToken)
    {
        var request = new GetObjectRequest { BucketName = Location.Bucket, Key = item.Key, EtagToMatch = item.ETag };
        try
        {
            using var response = await _s3.GetObjectAsync(request, cancellationToken).ConfigureAwait(false);
            if (response.ETag != item.ETag)
            {
                throw new BucketChangedException($"{item.Key} has ETag {response.ETag}, not the {item.ETag} listed.");
            }

            long written;
            await using (var file = new FileStream(path, FileMode.CreateNew, FileAccess.Write, FileShare.None, 1, FileOptions.Asynchronous))
            {
                var buffer = new byte[81920];
                written = 0;
                int read;
                while ((read = await response.ResponseStream.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0)
                {
                    written += read;
                    if (written > item.Size)
                    {
                        break;
                    }

                    await file.WriteAsync(buffer.AsMemory(0, read), cancellationToken).ConfigureAwait(false);
                }
            }

            // Off the socket thread before the file's time is set (a system call that may block).
            await Task.Yield();
            if (written != item.Size)
            {
                throw new IOException($"{item.Key}: {written} bytes came of the {item.Size} listed.");
            }

            return written;
        }
        catch (AmazonS3Exception ex) when (ex.StatusCode is HttpStatusCode.NotFound or HttpStatusCode.PreconditionFailed)
        {
            throw new BucketChangedException($"{item.Key} is gone or changed since it was listed ({ex.ErrorCode}).");
        }
    }

    public void Dispose() => _s3.Dispose();
}

/// <summary>What was listed is not what is there: an object deleted or replaced since, or the pointer missing.</summary>
internal sealed class BucketChangedException(string message) : Exception(message);
