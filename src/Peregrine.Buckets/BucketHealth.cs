using System.Text.Json;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// The bucket's part of the /healthz body:
/// <c>"bucket":{"source":"s3://b/p/","reachable":true,"release":"r42","lastSync":"…","error":null,"failingSince":null}</c>.
/// Readiness itself does not change when the bucket becomes unreachable after the first copy: the
/// replica serves the last release whole, and a load balancer should keep sending it requests.
/// </summary>
internal static class BucketHealth
{
    public static void Write(Utf8JsonWriter json, BucketState state)
    {
        json.WriteStartObject("bucket"u8);
        json.WriteString("source"u8, state.Location.ToString());
        json.WriteBoolean("reachable"u8, state.Error is null && state.LastSync is not null);
        WriteOrNull(json, "release"u8, state.Release);
        WriteOrNull(json, "lastSync"u8, state.LastSync?.ToString("O", System.Globalization.CultureInfo.InvariantCulture));
        WriteOrNull(json, "error"u8, state.Error);
        WriteOrNull(json, "failingSince"u8, state.FailingSince?.ToString("O", System.Globalization.CultureInfo.InvariantCulture));
        json.WriteEndObject();
    }

    private static void WriteOrNull(Utf8JsonWriter json, ReadOnlySpan<byte> name, string? value)
    {
        if (value is null)
        {
            json.WriteNull(name);
        }
        else
        {
            json.WriteString(name, value);
        }
    }
}
