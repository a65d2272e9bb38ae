using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Globalization;
using System.Text;

namespace Peregrine.Metrics;

/// <summary>
/// The running buckets of one histogram, one set per tag set, as the Prometheus exporter keeps
/// them: cumulative <c>_bucket</c> counts at the instrument's advised boundaries, <c>_sum</c> and
/// <c>_count</c>. Recording allocates nothing once a tag set has been seen: the tag set is looked
/// up by value (<see cref="TagKey"/>), then counted with <see cref="Interlocked"/> operations.
/// </summary>
internal sealed class HistogramSeries
{
    // The OpenTelemetry SDK's default boundaries, for a histogram that advises none.
    private static readonly double[] s_defaultBounds = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000];

    private readonly double[] _bounds;
    private readonly ConcurrentDictionary<TagKey, Cells> _cells = new();

    public HistogramSeries(Histogram<double> instrument)
    {
        Instrument = instrument;
        Name = PrometheusNames.MetricName(instrument.Name, instrument.Unit, monotonic: false);
        _bounds = instrument.Advice?.HistogramBucketBoundaries is { Count: > 0 } advised ? [.. advised] : s_defaultBounds;
    }

    public Instrument Instrument { get; }

    /// <summary>The Prometheus metric name, before the <c>_bucket</c>, <c>_sum</c> and <c>_count</c> suffixes.</summary>
    public string Name { get; }

    public void Record(double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var key = TagKey.From(tags);
        if (!_cells.TryGetValue(key, out var cells))
        {
            // Once per tag set: the labels are rendered here, never at collection time.
            cells = _cells.GetOrAdd(key, static (_, state) => new Cells(PrometheusNames.Labels(state.Tags.Span), state.Buckets), (Tags: tags.ToArray().AsMemory(), Buckets: _bounds.Length + 1));
        }

        var bucket = 0;
        while (bucket < _bounds.Length && value > _bounds[bucket])
        {
            bucket++;
        }

        Interlocked.Increment(ref cells.Buckets[bucket]);
        Interlocked.Increment(ref cells.Count);
        double sum, next;
        do
        {
            sum = Volatile.Read(ref cells.Sum);
            next = sum + value;
        }
        while (Interlocked.CompareExchange(ref cells.Sum, next, sum) != sum);
    }

    public void WriteTo(StringBuilder text)
    {
        if (!string.IsNullOrEmpty(Instrument.Description))
        {
            text.Append("# HELP ").Append(Name).Append(' ');
            PrometheusNames.AppendHelp(text, Instrument.Description);
            text.Append('\n');
        }

        text.Append("# TYPE ").Append(Name).Append(" histogram\n");
        var all = _cells.Values.ToArray();
        Array.Sort(all, static (a, b) => string.CompareOrdinal(a.Labels, b.Labels));
        foreach (var cells in all)
        {
            var separator = cells.Labels.Length == 0 ? "" : ",";
            long cumulative = 0;
            for (var i = 0; i < _bounds.Length; i++)
            {
                cumulative += Interlocked.Read(ref cells.Buckets[i]);
                Sample(text, "_bucket", $"{cells.Labels}{separator}le=\"{Number(_bounds[i])}\"", cumulative.ToString(CultureInfo.InvariantCulture));
            }

            // +Inf is the count read once, so that it is never below the last finite bucket.
            var count = Interlocked.Read(ref cells.Count);
            cumulative += Interlocked.Read(ref cells.Buckets[_bounds.Length]);
            Sample(text, "_bucket", $"{cells.Labels}{separator}le=\"+Inf\"", Math.Max(count, cumulative).ToString(CultureInfo.InvariantCulture));
            Sample(text, "_sum", cells.Labels, Number(Volatile.Read(ref cells.Sum)));
            Sample(text, "_count", cells.Labels, Math.Max(count, cumulative).ToString(CultureInfo.InvariantCulture));
        }
    }

    private void Sample(StringBuilder text, string suffix, string labels, string value)
    {
        text.Append(Name).Append(suffix);
        if (labels.Length != 0)
        {
            text.Append('{').Append(labels).Append('}');
        }

        text.Append(' ').Append(value).Append('\n');
    }

    private static string Number(double value) => value.ToString("R", CultureInfo.InvariantCulture);

    private sealed class Cells(string labels, int buckets)
    {
        public readonly string Labels = labels;
        public readonly long[] Buckets = new long[buckets];
        public long Count;
        public double Sum;
    }

    /// <summary>
    /// A tag set compared by value, without allocating, for up to four tags (Peregrine records
    /// four); a larger set is keyed by its rendered labels, which allocates, and which Peregrine's
    /// own instruments never need.
    /// </summary>
    private readonly struct TagKey : IEquatable<TagKey>
    {
        private readonly KeyValuePair<string, object?> _a, _b, _c, _d;
        private readonly int _count;
        private readonly string? _rendered;

        private TagKey(ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            _count = tags.Length;
            if (tags.Length > 4)
            {
                _rendered = PrometheusNames.Labels(tags);
                return;
            }

            _a = tags.Length > 0 ? tags[0] : default;
            _b = tags.Length > 1 ? tags[1] : default;
            _c = tags.Length > 2 ? tags[2] : default;
            _d = tags.Length > 3 ? tags[3] : default;
        }

        public static TagKey From(ReadOnlySpan<KeyValuePair<string, object?>> tags) => new(tags);

        public bool Equals(TagKey other)
            => _count == other._count
                && string.Equals(_rendered, other._rendered, StringComparison.Ordinal)
                && Same(_a, other._a) && Same(_b, other._b) && Same(_c, other._c) && Same(_d, other._d);

        public override bool Equals(object? obj) => obj is TagKey other && Equals(other);

        /// <summary>
        /// The values' hash: the keys (an instrument's constant tag names) take part in
        /// <see cref="Equals(TagKey)"/> only, and a string value is hashed by its characters
        /// (FNV-1a) rather than by <see cref="string.GetHashCode()"/>, whose randomized Marvin
        /// hash of four strings cost 77 ns a request against 31 (docs/performance.md, "The
        /// histogram's tag-set hash"). Equal values hash alike either way; the values are
        /// Peregrine's own few (methods, schemes, versions, status codes), never a client's text.
        /// </summary>
        public override int GetHashCode()
            => _rendered is not null
                ? _rendered.GetHashCode()
                : HashCode.Combine(_count, Hash(_a.Value), Hash(_b.Value), Hash(_c.Value), Hash(_d.Value));

        private static int Hash(object? value) => value switch
        {
            null => 0,
            string text => Fnv1a(text),
            _ => value.GetHashCode(),
        };

        private static int Fnv1a(string text)
        {
            var hash = 2166136261u;
            foreach (var c in text)
            {
                hash = (hash ^ c) * 16777619u;
            }

            return (int)hash;
        }

        private static bool Same(KeyValuePair<string, object?> x, KeyValuePair<string, object?> y)
            => string.Equals(x.Key, y.Key, StringComparison.Ordinal) && Equals(x.Value, y.Value);
    }
}
