using System.Diagnostics.Metrics;
using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Metrics;

/// <summary>peregrine.request.duration: one measurement per request Peregrine answers, on either path.</summary>
public sealed class RequestDurationTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private readonly List<(double Seconds, Dictionary<string, object?> Tags)> _measurements = [];
    private MeterListener _listener = null!;
    private AppHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("a.txt", "hello");
        _host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app =>
            {
                app.UsePeregrineMetrics("/metrics");
                app.UsePeregrine();
            },
            fastPath: true);
        var meter = _host.Services.GetRequiredService<PeregrineMetrics>().Meter;
        _listener = new MeterListener
        {
            InstrumentPublished = (instrument, listener) =>
            {
                if (ReferenceEquals(instrument.Meter, meter) && instrument.Name == "peregrine.request.duration")
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            },
        };
        _listener.SetMeasurementEventCallback<double>((_, value, tags, _) =>
        {
            var copy = new Dictionary<string, object?>();
            foreach (var tag in tags)
            {
                copy[tag.Key] = tag.Value;
            }

            lock (_measurements)
            {
                _measurements.Add((value, copy));
            }
        });
        _listener.Start();
        await _host.Services.GetRequiredService<FileCatalog>().Ready;
    }

    public async Task DisposeAsync()
    {
        _listener.Dispose();
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    private (double Seconds, Dictionary<string, object?> Tags) Single()
    {
        lock (_measurements)
        {
            return Assert.Single(_measurements);
        }
    }

    [Fact]
    public async Task FastPathRequest_RecordsOneMeasurement()
    {
        using var response = await _host.GetOnNewConnectionAsync("/a.txt");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(0, _host.PipelineRequests);
        var (seconds, tags) = Single();
        Assert.InRange(seconds, 0, 10);
        Assert.Equal("GET", tags["http.request.method"]);
        Assert.Equal(200, tags["http.response.status_code"]);
        Assert.Equal("http", tags["url.scheme"]);
        Assert.Equal("1.1", tags["network.protocol.version"]);
    }

    [Fact]
    public async Task MiddlewareRequest_RecordsOneMeasurement()
    {
        // A Range request with If-Match is the middleware's.
        using var response = await _host.GetOnNewConnectionAsync("/a.txt", ("Range", "bytes=0-1"), ("If-Match", "*"));

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Equal(1, _host.PipelineRequests);
        var (_, tags) = Single();
        Assert.Equal(206, tags["http.response.status_code"]);
        Assert.Equal("GET", tags["http.request.method"]);
        Assert.Equal("1.1", tags["network.protocol.version"]);
    }

    [Fact]
    public async Task RequestPassedOn_RecordsNothing()
    {
        using var response = await _host.GetOnNewConnectionAsync("/missing.txt");

        Assert.True(response.Headers.Contains(AppHost.NextHeader));
        lock (_measurements)
        {
            Assert.Empty(_measurements);
        }
    }

    [Fact]
    public async Task MetricsEndpoint_ShowsTheHistogramWithAdvisedBuckets()
    {
        using var fast = await _host.GetOnNewConnectionAsync("/a.txt");
        using var slow = await _host.GetOnNewConnectionAsync("/a.txt", ("Range", "bytes=0-1"), ("If-Match", "*"));

        var text = await _host.Client.GetStringAsync("/metrics");

        PrometheusText.AssertWellFormed(text);
        Assert.Contains("# TYPE peregrine_request_duration_seconds histogram\n", text);
        var ok = "http_request_method=\"GET\",http_response_status_code=\"200\",network_protocol_version=\"1.1\",url_scheme=\"http\"";
        Assert.Equal(1, PrometheusText.Sample(text, $"peregrine_request_duration_seconds_count{{{ok}}}"));
        Assert.Equal(1, PrometheusText.Sample(text, $"peregrine_request_duration_seconds_bucket{{{ok},le=\"+Inf\"}}"));
        Assert.NotNull(PrometheusText.Sample(text, $"peregrine_request_duration_seconds_bucket{{{ok},le=\"0.005\"}}"));
        Assert.Equal(1, PrometheusText.Sample(text, "peregrine_request_duration_seconds_count{http_request_method=\"GET\",http_response_status_code=\"206\",network_protocol_version=\"1.1\",url_scheme=\"http\"}"));
    }
}
