using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Peregrine.Metrics;

/// <summary>
/// The running values of one instrument, one per tag set, as the Prometheus exporter keeps
/// them. Recording is lock-free for the tag sets Peregrine records: none, or the status code
/// alone, kept in an array indexed by code. Any other tag set takes a lock and a dictionary
/// keyed by its rendered labels; Peregrine's own instruments never take that path.
/// </summary>
internal sealed class MetricSeries
{
    // Status codes are three digits (RFC 9110 §15); 0-99 are kept too, in case a caller records one.
    private const int StatusCodeSlots = 600;

    private readonly long[] _byStatus = new long[StatusCodeSlots];
    private readonly int[] _statusSeen = new int[StatusCodeSlots];
    private readonly Dictionary<string, long> _other = new(StringComparer.Ordinal);
    private long _untagged;
    private int _untaggedSeen;
    private int _taggedSeen;

    public MetricSeries(Instrument instrument, InstrumentShape shape)
    {
        Instrument = instrument;
        Shape = shape;
        Name = PrometheusNames.MetricName(instrument.Name, instrument.Unit, shape.Monotonic);
    }

    public Instrument Instrument { get; }

    public InstrumentShape Shape { get; }

    /// <summary>The Prometheus metric name, suffixes included.</summary>
    public string Name { get; }

    /// <summary>Called by the listener for every measurement; allocates nothing for the tag sets Peregrine records.</summary>
    public void Record(long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        if (tags.IsEmpty)
        {
            Update(ref _untagged, value);
            MarkSeen(ref _untaggedSeen);
            return;
        }

        if (tags.Length == 1
            && tags[0].Key == PeregrineMetrics.StatusCodeTag
            && tags[0].Value is int code
            && (uint)code < StatusCodeSlots)
        {
            Update(ref _byStatus[code], value);
            MarkSeen(ref _statusSeen[code]);
            MarkSeen(ref _taggedSeen);
            return;
        }

        RecordOther(value, tags);
    }

    /// <summary>Forgets every value: observable instruments report afresh at each collection.</summary>
    public void Reset()
    {
        Array.Clear(_byStatus);
        Array.Clear(_statusSeen);
        _untagged = 0;
        _untaggedSeen = 0;
        _taggedSeen = 0;
        lock (_other)
        {
            _other.Clear();
        }
    }

    public void WriteTo(StringBuilder text)
    {
        if (!string.IsNullOrEmpty(Instrument.Description))
        {
            text.Append("# HELP ").Append(Name).Append(' ');
            PrometheusNames.AppendHelp(text, Instrument.Description);
            text.Append('\n');
        }

        text.Append("# TYPE ").Append(Name).Append(Shape.Monotonic ? " counter\n" : " gauge\n");

        var untaggedSeen = Volatile.Read(ref _untaggedSeen) != 0;
        var taggedSeen = Volatile.Read(ref _taggedSeen) != 0;

        // A counter that has seen nothing still shows 0, so that rate() has a starting point
        // and a dashboard shows "none" rather than "no data".
        if (untaggedSeen || (Shape.Accumulates && !taggedSeen && OtherCount() == 0))
        {
            AppendSample(text, labels: null, Interlocked.Read(ref _untagged));
        }

        if (taggedSeen)
        {
            var statusLabel = PrometheusNames.LabelName(PeregrineMetrics.StatusCodeTag);
            for (var code = 0; code < StatusCodeSlots; code++)
            {
                if (Volatile.Read(ref _statusSeen[code]) != 0)
                {
                    AppendSample(text, $"{statusLabel}=\"{code.ToString(CultureInfo.InvariantCulture)}\"", Interlocked.Read(ref _byStatus[code]));
                }
            }
        }

        KeyValuePair<string, long>[] other;
        lock (_other)
        {
            other = [.. _other];
        }

        Array.Sort(other, static (a, b) => string.CompareOrdinal(a.Key, b.Key));
        foreach (var (labels, value) in other)
        {
            AppendSample(text, labels, value);
        }
    }

    private void AppendSample(StringBuilder text, string? labels, long value)
    {
        text.Append(Name);
        if (labels is not null)
        {
            text.Append('{').Append(labels).Append('}');
        }

        text.Append(' ').Append(value.ToString(CultureInfo.InvariantCulture)).Append('\n');
    }

    private void Update(ref long cell, long value)
    {
        if (Shape.Accumulates)
        {
            Interlocked.Add(ref cell, value);
        }
        else
        {
            Interlocked.Exchange(ref cell, value);
        }
    }

    private static void MarkSeen(ref int flag)
    {
        // Read before writing so that the hot path does not dirty a shared cache line every time.
        if (Volatile.Read(ref flag) == 0)
        {
            Volatile.Write(ref flag, 1);
        }
    }

    private int OtherCount()
    {
        lock (_other)
        {
            return _other.Count;
        }
    }

    private void RecordOther(long value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var labels = PrometheusNames.Labels(tags);
        lock (_other)
        {
            _other[labels] = Shape.Accumulates && _other.TryGetValue(labels, out var sum) ? sum + value : value;
        }
    }
}

/// <summary>How an instrument's measurements combine and how Prometheus should call them.</summary>
/// <param name="Monotonic">Only ever goes up: a Prometheus counter, named with <c>_total</c>.</param>
/// <param name="Accumulates">Each measurement is an increment (Counter, UpDownCounter) rather than the value itself.</param>
/// <param name="Observable">Measured by callback at collection time, so values from the last collection are dropped.</param>
internal readonly record struct InstrumentShape(bool Monotonic, bool Accumulates, bool Observable)
{
    /// <summary>
    /// The shape of a counter or gauge this exporter can show, or null for any other instrument
    /// (histograms are <see cref="HistogramSeries"/>; floating-point counters Peregrine records none of).
    /// </summary>
    public static InstrumentShape? Of(Instrument instrument) => instrument switch
    {
        Counter<long> or Counter<int> => new(Monotonic: true, Accumulates: true, Observable: false),
        UpDownCounter<long> or UpDownCounter<int> => new(Monotonic: false, Accumulates: true, Observable: false),
        Gauge<long> or Gauge<int> => new(Monotonic: false, Accumulates: false, Observable: false),
        ObservableCounter<long> or ObservableCounter<int> => new(Monotonic: true, Accumulates: false, Observable: true),
        ObservableUpDownCounter<long> or ObservableUpDownCounter<int> or ObservableGauge<long> or ObservableGauge<int>
            => new(Monotonic: false, Accumulates: false, Observable: true),
        _ => null,
    };
}
