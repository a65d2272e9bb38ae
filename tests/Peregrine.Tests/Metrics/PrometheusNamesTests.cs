
using Peregrine.Metrics;

namespace Peregrine.Tests.Metrics;

/// <summary>OpenTelemetry names to Prometheus names, as the OpenTelemetry specification maps them.</summary>
public sealed class PrometheusNamesTests
{
    [Theory]
    [InlineData("peregrine.requests", "{request}", true, "peregrine_requests_total")]
    [InlineData("peregrine.response.body.size", "By", true, "peregrine_response_body_size_bytes_total")]
    [InlineData("peregrine.compression.saved", "By", true, "peregrine_compression_saved_bytes_total")]
    [InlineData("peregrine.files.indexed", "{file}", false, "peregrine_files_indexed")]
    [InlineData("http.server.request.duration", "s", false, "http_server_request_duration_seconds")]
    [InlineData("peregrine.memory.bytes", "By", false, "peregrine_memory_bytes")] // the unit is not said twice
    [InlineData("peregrine.sent_total", null, true, "peregrine_sent_total")] // nor _total
    [InlineData("peregrine.hit.ratio", "1", false, "peregrine_hit_ratio")]
    [InlineData("peregrine..odd-name/x", null, false, "peregrine_odd_name_x")]
    [InlineData("9lives", null, false, "_9lives")]
    public void MetricName_FollowsTheOpenTelemetryToPrometheusMapping(string name, string? unit, bool monotonic, string expected)
    {
        Assert.Equal(expected, PrometheusNames.MetricName(name, unit, monotonic));
    }

    [Theory]
    [InlineData("http.response.status_code", "http_response_status_code")]
    [InlineData("content-encoding", "content_encoding")]
    [InlineData("a:b", "a_b")] // colons are for metric names only
    public void LabelName_ReplacesWhatPrometheusDoesNotAllow(string key, string expected)
    {
        Assert.Equal(expected, PrometheusNames.LabelName(key));
    }

    [Theory]
    [InlineData("plain", "path=\"plain\"")]
    [InlineData("a\"b", "path=\"a\\\"b\"")]
    [InlineData("a\\b", "path=\"a\\\\b\"")]
    [InlineData("a\nb", "path=\"a\\nb\"")]
    public void Labels_EscapeBackslashQuoteAndLineFeedInValues(string value, string expected)
    {
        Assert.Equal(expected, PrometheusNames.Labels([new("path", value)]));
    }

    [Fact]
    public void Labels_AreSortedByName_SoOneTagSetHasOneSpelling()
    {
        Assert.Equal(
            PrometheusNames.Labels([new("b", 2), new("a", 1)]),
            PrometheusNames.Labels([new("a", 1), new("b", 2)]));
    }
}
