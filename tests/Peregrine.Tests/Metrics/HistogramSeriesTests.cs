using System.Diagnostics.Metrics;
using System.Text;
using Peregrine.Metrics;

namespace Peregrine.Tests.Metrics;

/// <summary>How a histogram is rendered in the Prometheus text format.</summary>
public sealed class HistogramSeriesTests : IDisposable
{
    private readonly Meter _meter = new("HistogramSeriesTests");

    public void Dispose() => _meter.Dispose();

    private string Render(Action<HistogramSeries> record)
    {
        var histogram = _meter.CreateHistogram("test.duration", "s", "A test.", tags: null, new InstrumentAdvice<double> { HistogramBucketBoundaries = [0.005, 0.01, 1] });
        var series = new HistogramSeries(histogram);
        record(series);
        var text = new StringBuilder();
        series.WriteTo(text);
        PrometheusText.AssertWellFormed(text.ToString());
        return text.ToString();
    }

    [Fact]
    public void Buckets_AreCumulative_UpperBoundInclusive_WithInfSumAndCount()
    {
        KeyValuePair<string, object?>[] tags = [new("http.response.status_code", 200)];

        var text = Render(series =>
        {
            series.Record(0.005, tags);   // on a boundary: counts in le="0.005"
            series.Record(0.0051, tags);
            series.Record(11, tags);      // beyond every boundary: +Inf only
        });

        const string Labels = "http_response_status_code=\"200\"";
        Assert.Equal(1, PrometheusText.Sample(text, $"test_duration_seconds_bucket{{{Labels},le=\"0.005\"}}"));
        Assert.Equal(2, PrometheusText.Sample(text, $"test_duration_seconds_bucket{{{Labels},le=\"0.01\"}}"));
        Assert.Equal(2, PrometheusText.Sample(text, $"test_duration_seconds_bucket{{{Labels},le=\"1\"}}"));
        Assert.Equal(3, PrometheusText.Sample(text, $"test_duration_seconds_bucket{{{Labels},le=\"+Inf\"}}"));
        Assert.Equal(3, PrometheusText.Sample(text, $"test_duration_seconds_count{{{Labels}}}"));
        var sum = text.Split('\n').Single(l => l.StartsWith($"test_duration_seconds_sum{{{Labels}}} ", StringComparison.Ordinal));
        Assert.Equal(11.0101, double.Parse(sum[(sum.LastIndexOf(' ') + 1)..], System.Globalization.CultureInfo.InvariantCulture), 9);
    }

    [Fact]
    public void TagSets_AreKeptApart_AndEqualValuesShareASeries()
    {
        var text = Render(series =>
        {
            // Two tag arrays with equal contents (a boxed 200 each time) are one series.
            series.Record(0.001, [new("http.response.status_code", 200)]);
            series.Record(0.001, [new("http.response.status_code", 200)]);
            series.Record(0.001, [new("http.response.status_code", 304)]);
        });

        Assert.Equal(2, PrometheusText.Sample(text, "test_duration_seconds_count{http_response_status_code=\"200\"}"));
        Assert.Equal(1, PrometheusText.Sample(text, "test_duration_seconds_count{http_response_status_code=\"304\"}"));
    }

    [Fact]
    public void StringValues_AreComparedByTheirCharacters_NotTheirInstances()
    {
        // Equal strings made apart (not the same instance) are one series; strings that differ
        // only in one character, or in order across tags, are not.
        static KeyValuePair<string, object?>[] Tags(string method, string scheme)
            => [new("http.request.method", method), new("http.response.status_code", 200), new("url.scheme", scheme)];

        var text = Render(series =>
        {
            series.Record(0.001, Tags("GET", "https"));
            series.Record(0.001, Tags(new string("GET".AsSpan()), new string("https".AsSpan())));
            series.Record(0.001, Tags("GEU", "https"));
            series.Record(0.001, Tags("https", "GET"));
        });

        Assert.Equal(2, PrometheusText.Sample(text, "test_duration_seconds_count{http_request_method=\"GET\",http_response_status_code=\"200\",url_scheme=\"https\"}"));
        Assert.Equal(1, PrometheusText.Sample(text, "test_duration_seconds_count{http_request_method=\"GEU\",http_response_status_code=\"200\",url_scheme=\"https\"}"));
        Assert.Equal(1, PrometheusText.Sample(text, "test_duration_seconds_count{http_request_method=\"https\",http_response_status_code=\"200\",url_scheme=\"GET\"}"));
    }
}
