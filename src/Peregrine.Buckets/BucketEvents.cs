using System.Text.Json;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// Reads S3 event notifications (<c>{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":…},"object":{"key":…}}}]}</c>),
/// as S3, Ceph RGW and MinIO post them to an HTTP endpoint. An event is only a hint that something
/// changed: what is copied always comes from the bucket itself, so a forged event can cause a sync,
/// never serve anything the bucket does not hold.
/// </summary>
internal static class BucketEvents
{
    /// <summary>The most records one notification may hold: S3 sends one, RGW one or a few.</summary>
    public const int MaxRecords = 1000;

    /// <summary>
    /// The number of records in <paramref name="body"/> about objects under <paramref name="location"/>;
    /// null with the reason when the body is not an event notification.
    /// </summary>
    public static int? Relevant(ReadOnlyMemory<byte> body, BucketLocation location, out string? problem)
    {
        problem = null;
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(body, new JsonDocumentOptions { MaxDepth = 16 });
        }
        catch (JsonException)
        {
            problem = "the body is not JSON.";
            return null;
        }

        using (document)
        {
            if (document.RootElement.ValueKind != JsonValueKind.Object
                || !document.RootElement.TryGetProperty("Records", out var records)
                || records.ValueKind != JsonValueKind.Array)
            {
                problem = "the body has no \"Records\" array.";
                return null;
            }

            if (records.GetArrayLength() > MaxRecords)
            {
                problem = $"more than {MaxRecords} records.";
                return null;
            }

            var relevant = 0;
            foreach (var record in records.EnumerateArray())
            {
                if (!TryRead(record, out var bucket, out var key))
                {
                    problem = "a record lacks s3.bucket.name or s3.object.key.";
                    return null;
                }

                if (bucket == location.Bucket && (key.StartsWith(location.Prefix, StringComparison.Ordinal) || Decoded(key).StartsWith(location.Prefix, StringComparison.Ordinal)))
                {
                    relevant++;
                }
            }

            return relevant;
        }
    }

    private static bool TryRead(JsonElement record, out string bucket, out string key)
    {
        bucket = key = "";
        if (record.ValueKind != JsonValueKind.Object
            || !record.TryGetProperty("s3", out var s3) || s3.ValueKind != JsonValueKind.Object
            || !s3.TryGetProperty("bucket", out var bucketElement) || bucketElement.ValueKind != JsonValueKind.Object
            || !bucketElement.TryGetProperty("name", out var name) || name.ValueKind != JsonValueKind.String
            || !s3.TryGetProperty("object", out var objectElement) || objectElement.ValueKind != JsonValueKind.Object
            || !objectElement.TryGetProperty("key", out var keyElement) || keyElement.ValueKind != JsonValueKind.String)
        {
            return false;
        }

        bucket = name.GetString()!;
        key = keyElement.GetString()!;
        return true;
    }

    /// <summary>AWS sends keys URL-encoded with '+' for spaces; RGW sends them as they are.</summary>
    private static string Decoded(string key)
    {
        try
        {
            return Uri.UnescapeDataString(key.Replace('+', ' '));
        }
        catch (UriFormatException)
        {
            return key;
        }
    }
}
