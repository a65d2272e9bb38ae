using System.Diagnostics;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Peregrine.Metrics;

/// <summary>
/// Keeps running totals of Peregrine's instruments and renders them in the Prometheus text
/// exposition format, version 0.0.4. It listens to one meter instance only (the host's
/// <see cref="PeregrineMetrics.Meter"/>), not to every meter named "Peregrine": another host
/// in the same process has its own meter and its own numbers.
/// </summary>
/// <remarks>
/// The recording side runs on the request path: it is a cast of the listener state, then an
/// <see cref="Interlocked"/> add into an array cell (see <see cref="MetricSeries"/>), with no
/// lock and no allocation. Observable instruments are read at scrape time only.
/// </remarks>
internal sealed class PrometheusExporter : IDisposable
{
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    private readonly Meter _meter;
    private readonly MeterListener _listener;
    private readonly Lock _scrapeLock = new();
    private readonly Lock _seriesLock = new();

    // Copied on write: instruments are published a handful of times at start-up, and a scrape
    // reads the array without taking the lock.
    private MetricSeries[] _series = [];
    private HistogramSeries[] _histograms = [];

    public PrometheusExporter(PeregrineMetrics metrics)
    {
        ArgumentNullException.ThrowIfNull(metrics);
        _meter = metrics.Meter;
        _listener = new MeterListener
        {
            InstrumentPublished = OnInstrumentPublished,
            MeasurementsCompleted = OnMeasurementsCompleted,
        };
        _listener.SetMeasurementEventCallback<long>(static (_, value, tags, state) => ((MetricSeries)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<int>(static (_, value, tags, state) => ((MetricSeries)state!).Record(value, tags));
        _listener.SetMeasurementEventCallback<double>(static (_, value, tags, state) => ((HistogramSeries)state!).Record(value, tags));

        // Start publishes the instruments the meter already has, so nothing created before
        // the exporter is missed; measurements made before it are.
        _listener.Start();
    }

    /// <summary>Reads the observable instruments and renders every series.</summary>
    public string Scrape()
    {
        // One scrape at a time: observable series are cleared, re-read and rendered as one step.
        lock (_scrapeLock)
        {
            var series = Volatile.Read(ref _series);
            foreach (var s in series)
            {
                if (s.Shape.Observable)
                {
                    s.Reset();
                }
            }

            _listener.RecordObservableInstruments();

            var text = new StringBuilder(256 * Math.Max(1, series.Length));
            foreach (var s in series)
            {
                s.WriteTo(text);
            }

            foreach (var h in Volatile.Read(ref _histograms))
            {
                h.WriteTo(text);
            }

            WriteRuntime(text);
            return text.ToString();
        }
    }

    /// <summary>
    /// The process's own figures, read at scrape time, under the names Prometheus's .NET and
    /// process collectors use: what an operator graphs beside the server's (memory, GC,
    /// threads). An app embedding Peregrine has its runtime's meter for these; the standalone
    /// server's /metrics is the only place they show.
    /// </summary>
    private static void WriteRuntime(StringBuilder text)
    {
        var gc = GC.GetGCMemoryInfo();
        using var process = Process.GetCurrentProcess();
        Gauge(text, "process_resident_memory_bytes", "Resident memory size in bytes.", process.WorkingSet64);
        Gauge(text, "process_threads", "Threads of the process.", process.Threads.Count);
        Gauge(text, "dotnet_gc_heap_size_bytes", "Bytes of the GC heap after the last collection.", gc.HeapSizeBytes);
        Gauge(text, "dotnet_gc_committed_bytes", "Bytes of memory the GC has committed, as of the last collection.", gc.TotalCommittedBytes);
        Gauge(text, "dotnet_gc_fragmented_bytes", "Bytes free between objects in the GC heap, as of the last collection.", gc.FragmentedBytes);
        Gauge(text, "dotnet_gc_memory_total_available_bytes", "Bytes the GC may use.", gc.TotalAvailableMemoryBytes);
        Gauge(text, "dotnet_total_memory_bytes", "Bytes currently thought to be allocated on the GC heap.", GC.GetTotalMemory(forceFullCollection: false));
        text.Append("# HELP dotnet_collection_count_total Garbage collections since the process started, by generation.\n# TYPE dotnet_collection_count_total counter\n");
        for (var generation = 0; generation <= GC.MaxGeneration; generation++)
        {
            text.Append(CultureInfo.InvariantCulture, $"dotnet_collection_count_total{{generation=\"{generation}\"}} {GC.CollectionCount(generation)}\n");
        }
    }

    private static void Gauge(StringBuilder text, string name, string help, long value)
        => text.Append(CultureInfo.InvariantCulture, $"# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}\n");

    private void OnInstrumentPublished(Instrument instrument, MeterListener listener)
    {
        if (!ReferenceEquals(instrument.Meter, _meter))
        {
            return;
        }

        if (instrument is Histogram<double> histogram)
        {
            var buckets = new HistogramSeries(histogram);
            lock (_seriesLock)
            {
                _histograms = [.. _histograms, buckets];
            }

            listener.EnableMeasurementEvents(instrument, buckets);
            return;
        }

        if (InstrumentShape.Of(instrument) is not { } shape)
        {
            return;
        }

        var series = new MetricSeries(instrument, shape);
        lock (_seriesLock)
        {
            _series = [.. _series, series];
        }

        listener.EnableMeasurementEvents(instrument, series);
    }

    private void OnMeasurementsCompleted(Instrument instrument, object? state)
    {
        // The meter was disposed (its host is stopping): its series go with it.
        lock (_seriesLock)
        {
            _series = [.. _series.Where(s => !ReferenceEquals(s, state))];
            _histograms = [.. _histograms.Where(h => !ReferenceEquals(h, state))];
        }
    }

    public void Dispose() => _listener.Dispose();
}
