using System.Diagnostics.Metrics;
using Peregrine.Metrics;

namespace Peregrine.Tests.Metrics;

/// <summary>
/// What <see cref="PeregrineMetrics.Served"/> records, as the Prometheus exporter shows it,
/// and that recording allocates nothing.
/// </summary>
public sealed class PeregrineMetricsTests : IDisposable
{
    private readonly MeteredServices _services = new();

    public void Dispose() => _services.Dispose();

    [Fact]
    public void Served_CountsTheResponseUnderItsStatusCode()
    {
        _ = _services.Exporter;

        _services.Metrics.Served(200, 10, fromMemory: true, compressionSaved: 0);
        _services.Metrics.Served(200, 10, fromMemory: true, compressionSaved: 0);
        _services.Metrics.Served(304, 0, fromMemory: true, compressionSaved: 0);

        var text = _services.Scrape();
        Assert.Equal(2, PrometheusText.Sample(text, "peregrine_requests_total{http_response_status_code=\"200\"}"));
        Assert.Equal(1, PrometheusText.Sample(text, "peregrine_requests_total{http_response_status_code=\"304\"}"));
        Assert.Null(PrometheusText.Sample(text, "peregrine_requests_total{http_response_status_code=\"404\"}"));
        Assert.Contains("# TYPE peregrine_requests_total counter\n", text);
    }

    [Theory]
    [InlineData(true, 1, 0)]
    [InlineData(false, 0, 1)]
    public void Served_WithABody_CountsAHitFromMemoryOrAMissFromDisk(bool fromMemory, long hits, long misses)
    {
        _ = _services.Exporter;

        _services.Metrics.Served(200, 1234, fromMemory, compressionSaved: 0);

        var text = _services.Scrape();
        Assert.Equal(1234, PrometheusText.Sample(text, "peregrine_response_body_size_bytes_total"));
        Assert.Equal(hits, PrometheusText.Sample(text, "peregrine_cache_hits_total"));
        Assert.Equal(misses, PrometheusText.Sample(text, "peregrine_cache_misses_total"));
    }

    [Theory]
    [InlineData(304)]
    [InlineData(412)]
    [InlineData(200)] // HEAD
    public void Served_WithoutABody_CountsTheRequestButNeitherHitNorMiss(int statusCode)
    {
        _ = _services.Exporter;

        _services.Metrics.Served(statusCode, 0, fromMemory: true, compressionSaved: 0);

        var text = _services.Scrape();
        Assert.Equal(1, PrometheusText.Sample(text, $"peregrine_requests_total{{http_response_status_code=\"{statusCode}\"}}"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_cache_hits_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_cache_misses_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_response_body_size_bytes_total"));
    }

    [Fact]
    public void Served_AnEncodedRepresentation_AddsTheBytesCompressionSaved()
    {
        _ = _services.Exporter;

        _services.Metrics.Served(200, 300, fromMemory: true, compressionSaved: 700);
        _services.Metrics.Served(200, 1000, fromMemory: true, compressionSaved: 0);

        Assert.Equal(700, PrometheusText.Sample(_services.Scrape(), "peregrine_compression_saved_bytes_total"));
    }

    [Fact]
    public void DeltaServed_CountsTheResponseAndWhatItSavedOverTheOrdinaryCoding()
    {
        _ = _services.Exporter;

        _services.Metrics.DeltaServed(20_000);
        _services.Metrics.DeltaServed(0);

        var text = _services.Scrape();
        Assert.Equal(2, PrometheusText.Sample(text, "peregrine_dictionary_deltas_total"));
        Assert.Equal(20_000, PrometheusText.Sample(text, "peregrine_dictionary_saved_bytes_total"));
    }

    [Fact]
    public void Served_AStatusCodeHttpDoesNotDefine_IsStillCountedUnderIt()
    {
        _ = _services.Exporter;

        _services.Metrics.Served(999, 0, fromMemory: false, compressionSaved: 0);

        Assert.Equal(1, PrometheusText.Sample(_services.Scrape(), "peregrine_requests_total{http_response_status_code=\"999\"}"));
    }

    [Fact]
    public void Scrape_BeforeAnyResponse_ShowsEveryCounterAtZero()
    {
        var text = _services.Scrape();

        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_requests_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_response_body_size_bytes_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_cache_hits_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_cache_misses_total"));
        Assert.Equal(0, PrometheusText.Sample(text, "peregrine_compression_saved_bytes_total"));
    }

    [Fact]
    public void Scrape_DescribesEachMetricWithHelpAndType()
    {
        var text = _services.Scrape();

        Assert.Contains("# HELP peregrine_response_body_size_bytes_total Bytes of response body sent.\n", text);
        Assert.Contains("# TYPE peregrine_response_body_size_bytes_total counter\n", text);
        Assert.Contains("# TYPE peregrine_files_indexed gauge\n", text);
    }

    [Fact]
    public void FilesIndexed_IsReadFromItsSourceAtEachScrape()
    {
        long files = 3;
        _services.Metrics.SetFilesIndexedSource(() => files);

        Assert.Equal(3, PrometheusText.Sample(_services.Scrape(), "peregrine_files_indexed"));
        files = 5;
        Assert.Equal(5, PrometheusText.Sample(_services.Scrape(), "peregrine_files_indexed"));
    }

    [Fact]
    public void FilesIndexed_WithoutASource_HasNoSample()
    {
        Assert.Null(PrometheusText.Sample(_services.Scrape(), "peregrine_files_indexed"));
    }

    [Fact]
    public void Exporter_ShowsOnlyItsOwnHostsMeter_NotAnotherMeterNamedPeregrine()
    {
        using var other = new MeteredServices();
        _ = _services.Exporter;
        _ = other.Exporter;

        other.Metrics.Served(200, 10, fromMemory: true, compressionSaved: 0);

        Assert.Null(PrometheusText.Sample(_services.Scrape(), "peregrine_requests_total{http_response_status_code=\"200\"}"));
        Assert.Equal(1, PrometheusText.Sample(other.Scrape(), "peregrine_requests_total{http_response_status_code=\"200\"}"));
    }

    [Fact]
    public void Served_FromManyThreadsAtOnce_LosesNoCount()
    {
        const int threads = 8;
        const int perThread = 20_000;
        _ = _services.Exporter;

        Parallel.For(0, threads, new ParallelOptions { MaxDegreeOfParallelism = threads }, _ =>
        {
            for (var i = 0; i < perThread; i++)
            {
                _services.Metrics.Served(200, 2, fromMemory: (i & 1) == 0, compressionSaved: 1);
            }
        });

        var text = _services.Scrape();
        Assert.Equal(threads * perThread, PrometheusText.Sample(text, "peregrine_requests_total{http_response_status_code=\"200\"}"));
        Assert.Equal(threads * perThread * 2L, PrometheusText.Sample(text, "peregrine_response_body_size_bytes_total"));
        Assert.Equal(threads * perThread / 2, PrometheusText.Sample(text, "peregrine_cache_hits_total"));
        Assert.Equal(threads * perThread, PrometheusText.Sample(text, "peregrine_compression_saved_bytes_total"));
    }

    public enum Listening
    {
        Nothing,
        PrometheusExporter,
        BareMeterListener,
    }

    [Theory]
    [InlineData(Listening.Nothing)]
    [InlineData(Listening.PrometheusExporter)]
    [InlineData(Listening.BareMeterListener)]
    public void Served_AllocatesNothing(Listening listening)
    {
        using var bare = new MeterListener();
        if (listening == Listening.PrometheusExporter)
        {
            _ = _services.Exporter;
        }
        else if (listening == Listening.BareMeterListener)
        {
            var meter = _services.Metrics.Meter;
            bare.InstrumentPublished = (instrument, listener) =>
            {
                if (ReferenceEquals(instrument.Meter, meter))
                {
                    listener.EnableMeasurementEvents(instrument);
                }
            };
            bare.SetMeasurementEventCallback<long>(static (_, _, _, _) => { });
            bare.Start();
        }

        var metrics = _services.Metrics;
        int[] statusCodes = [200, 206, 304, 404, 412, 416, 503];
        for (var i = 0; i < 1_000; i++)
        {
            ServeOne(metrics, statusCodes, i);
        }

        // The best of three rounds: a one-off allocation on this thread by something else in
        // the process (tiering, a listener published by a parallel test) is not Served's.
        var allocated = long.MaxValue;
        for (var round = 0; round < 3; round++)
        {
            var before = GC.GetAllocatedBytesForCurrentThread();
            for (var i = 0; i < 10_000; i++)
            {
                ServeOne(metrics, statusCodes, i);
            }

            allocated = Math.Min(allocated, GC.GetAllocatedBytesForCurrentThread() - before);
        }

        Assert.Equal(0, allocated);
        if (listening == Listening.PrometheusExporter)
        {
            // The calls were recorded, not skipped.
            var text = _services.Scrape();
            Assert.Equal(31_000, PrometheusText.Sample(text, "peregrine_cache_hits_total")!.Value + PrometheusText.Sample(text, "peregrine_cache_misses_total")!.Value);
        }

        static void ServeOne(PeregrineMetrics metrics, int[] statusCodes, int i)
            => metrics.Served(statusCodes[i % statusCodes.Length], 100 + i, fromMemory: (i & 1) == 0, compressionSaved: i & 7);
    }
}
