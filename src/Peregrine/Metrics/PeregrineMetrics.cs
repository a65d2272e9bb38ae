using System.Diagnostics;
using System.Diagnostics.Metrics;

namespace Peregrine.Metrics;

/// <summary>
/// Peregrine's instruments, on a meter named <see cref="MeterName"/>. Names and units follow
/// the OpenTelemetry conventions (lowercase dotted names, UCUM units), so any exporter that
/// listens to the meter (OpenTelemetry's, <c>dotnet-counters</c>, or the Prometheus endpoint
/// of <see cref="PrometheusExporter"/>) shows them without renaming.
/// </summary>
/// <remarks>
/// <see cref="Served"/> runs once per response and allocates nothing, whether or not anything
/// listens: the one tag value, the status code, is taken boxed from a table made once, and
/// each instrument is handed a single <see cref="KeyValuePair{TKey, TValue}"/> by value.
/// </remarks>
internal sealed class PeregrineMetrics
{
    public const string MeterName = "Peregrine";

    public const string StatusCodeTag = "http.response.status_code";

    public const string MethodTag = "http.request.method";

    public const string SchemeTag = "url.scheme";

    public const string ProtocolVersionTag = "network.protocol.version";

    /// <summary>
    /// The bucket boundaries OpenTelemetry's semantic conventions advise for
    /// <c>http.server.request.duration</c>, in seconds.
    /// </summary>
    internal static readonly double[] DurationBuckets = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

    private const int FirstStatusCode = 100;
    private const int LastStatusCode = 599;

    // Counter<long>.Add takes tag values as object: an int passed as is would be boxed on
    // every call. Every status code HTTP defines (RFC 9110 §15: 100-599) is boxed here, once.
    private static readonly object[] s_statusCodes = BoxStatusCodes();

    private readonly Counter<long> _requests;
    private readonly Counter<long> _bodyBytes;
    private readonly Counter<long> _cacheHits;
    private readonly Counter<long> _cacheMisses;
    private readonly Counter<long> _compressionSaved;
    private readonly Counter<long> _deltas;
    private readonly Counter<long> _deltaSaved;
    private readonly Histogram<double> _duration;
    private Func<long>? _filesIndexed;
    private Func<CompressionTotals>? _compression;

    public PeregrineMetrics(IMeterFactory meterFactory)
    {
        ArgumentNullException.ThrowIfNull(meterFactory);

        // Through the factory rather than new Meter(...): the meter is scoped to the host's
        // container, so two hosts in one process (tests, or an app that embeds two servers)
        // each have their own instruments, and the container disposes the meter.
        Meter = meterFactory.Create(new MeterOptions(MeterName) { Version = typeof(PeregrineMetrics).Assembly.GetName().Version?.ToString() });

        _requests = Meter.CreateCounter<long>("peregrine.requests", "{request}", "Responses Peregrine sent for files it holds, by status code.");
        _bodyBytes = Meter.CreateCounter<long>("peregrine.response.body.size", "By", "Bytes of response body sent.");
        _cacheHits = Meter.CreateCounter<long>("peregrine.cache.hits", "{request}", "Responses whose body was sent from memory.");
        _cacheMisses = Meter.CreateCounter<long>("peregrine.cache.misses", "{request}", "Responses whose body was read from disk.");
        _compressionSaved = Meter.CreateCounter<long>("peregrine.compression.saved", "By", "Bytes not sent because an encoded representation was chosen: identity length minus encoded length.");
        _deltas = Meter.CreateCounter<long>("peregrine.dictionary.deltas", "{response}", "Responses sent as a delta against a dictionary the client holds (RFC 9842 dcz).");
        _deltaSaved = Meter.CreateCounter<long>("peregrine.dictionary.saved", "By", "Bytes a delta saved over the representation sent without it: ordinary length minus delta length.");

        // An up-down counter rather than a gauge: a count of things present adds up across
        // servers (the OpenTelemetry guidance for "how many are there now").
        Meter.CreateObservableUpDownCounter("peregrine.files.indexed", ObserveFilesIndexed, "{file}", "Files in the index in force.");

        // The semantics of http.server.request.duration, under Peregrine's own name: ASP.NET
        // Core's hosting meter already records that name for every request that reaches the
        // pipeline, and the same name twice would count those requests twice.
        _duration = Meter.CreateHistogram(
            "peregrine.request.duration",
            "s",
            "Time to answer requests Peregrine served itself, fast path included: from the request head to the response written.",
            tags: null,
            new InstrumentAdvice<double> { HistogramBucketBoundaries = DurationBuckets });

        Meter.CreateObservableUpDownCounter("peregrine.compression.pending", () => ObserveCompression(static c => c.Pending), "{file}", "Files waiting for their first variants: served unencoded until the fast pass reaches them.");
        Meter.CreateObservableUpDownCounter("peregrine.compression.upgrading", () => ObserveCompression(static c => c.Upgrading), "{file}", "Files served with fast-pass variants, waiting for the final pass to make them again at final quality.");
        Meter.CreateObservableCounter("peregrine.compression.done", () => ObserveCompression(static c => c.Done), "{file}", "Files whose compression is done: their variants are published at final quality, or none was worth keeping.");
        Meter.CreateObservableGauge("peregrine.compression.final", () => ObserveCompression(static c => c.Final ? 1 : 0), "1", "1 when every compressible file of the indexes in force is served at final quality (both passes done), 0 while compression runs.");
    }

    /// <summary>
    /// A start timestamp for <see cref="RequestDone"/>, or 0 when nothing listens to the
    /// duration histogram, so that an application without a metrics exporter does not even read
    /// the clock.
    /// </summary>
    public long RequestStarted() => _duration.Enabled ? Stopwatch.GetTimestamp() : 0;

    /// <summary>
    /// Records the duration of one request Peregrine answered, from <paramref name="started"/>
    /// (<see cref="RequestStarted"/>). Allocates nothing: the tag values are interned strings
    /// (<paramref name="method"/> from <see cref="DurationTags.Method"/>, <paramref name="protocolVersion"/>
    /// such as <c>1.1</c>, or null when unknown) and pre-boxed status codes, and the four tags fit
    /// the <see cref="TagList"/> inline.
    /// </summary>
    public void RequestDone(long started, string method, int statusCode, bool https, string? protocolVersion)
    {
        if (started == 0)
        {
            return;
        }

        var tags = new TagList
        {
            { MethodTag, method },
            { StatusCodeTag, BoxedStatusCode(statusCode) },
            { SchemeTag, https ? "https" : "http" },
        };
        if (protocolVersion is not null)
        {
            tags.Add(ProtocolVersionTag, protocolVersion);
        }

        _duration.Record(Stopwatch.GetElapsedTime(started).TotalSeconds, in tags);
    }

    public Meter Meter { get; }

    /// <summary>
    /// Records one response. Call it once per response that Peregrine answers itself.
    /// </summary>
    /// <param name="statusCode">The status code sent.</param>
    /// <param name="bodyBytes">The body bytes sent: 0 for 304, HEAD and other bodiless answers.</param>
    /// <param name="fromMemory">
    /// Whether the body was sent from bytes held in memory (a cache hit) rather than read from
    /// disk (a miss). A response without a body read from anywhere (<paramref name="bodyBytes"/>
    /// is 0) counts as neither.
    /// </param>
    /// <param name="compressionSaved">
    /// For an encoded representation, the identity length minus the encoded length; 0 otherwise.
    /// </param>
    public void Served(int statusCode, long bodyBytes, bool fromMemory, long compressionSaved)
    {
        if (_requests.Enabled)
        {
            _requests.Add(1, new KeyValuePair<string, object?>(StatusCodeTag, BoxedStatusCode(statusCode)));
        }

        if (bodyBytes > 0)
        {
            _bodyBytes.Add(bodyBytes);
            (fromMemory ? _cacheHits : _cacheMisses).Add(1);
        }

        if (compressionSaved > 0)
        {
            _compressionSaved.Add(compressionSaved);
        }
    }

    /// <summary>
    /// Records a 200 whose body is a delta against the client's dictionary (RFC 9842), and
    /// what it saved over the representation chosen without it (<paramref name="savedOverOrdinary"/>).
    /// The response is recorded by <see cref="Served"/> too, as any other.
    /// </summary>
    public void DeltaServed(long savedOverOrdinary)
    {
        _deltas.Add(1);
        if (savedOverOrdinary > 0)
        {
            _deltaSaved.Add(savedOverOrdinary);
        }
    }

    /// <summary>
    /// Sets where <c>peregrine.files.indexed</c> reads its value when an exporter collects.
    /// Until it is set, nothing is reported.
    /// </summary>
    public void SetFilesIndexedSource(Func<long> filesIndexed)
    {
        ArgumentNullException.ThrowIfNull(filesIndexed);
        Volatile.Write(ref _filesIndexed, filesIndexed);
    }

    /// <summary>Sets where the compression instruments read their values when an exporter collects.</summary>
    public void SetCompressionSource(Func<CompressionTotals> compression)
    {
        ArgumentNullException.ThrowIfNull(compression);
        Volatile.Write(ref _compression, compression);
    }

    private IEnumerable<Measurement<long>> ObserveCompression(Func<CompressionTotals, long> value)
    {
        // Called at collection time only.
        var source = Volatile.Read(ref _compression);
        return source is null ? [] : [new Measurement<long>(value(source()))];
    }

    private IEnumerable<Measurement<long>> ObserveFilesIndexed()
    {
        // Called at collection time only (a scrape), never per request.
        var source = Volatile.Read(ref _filesIndexed);
        return source is null ? [] : [new Measurement<long>(source())];
    }

    private static object BoxedStatusCode(int statusCode)
        => (uint)(statusCode - FirstStatusCode) <= LastStatusCode - FirstStatusCode
            ? s_statusCodes[statusCode - FirstStatusCode]
            : statusCode; // Not a status code HTTP defines; Kestrel does not send one.

    private static object[] BoxStatusCodes()
    {
        var boxes = new object[LastStatusCode - FirstStatusCode + 1];
        for (var i = 0; i < boxes.Length; i++)
        {
            boxes[i] = FirstStatusCode + i;
        }

        return boxes;
    }
}

/// <summary>The compression instruments' values, all instances together.</summary>
/// <param name="Pending">Files waiting for their first variants.</param>
/// <param name="Upgrading">Files served with first-pass variants, waiting for the final pass.</param>
/// <param name="Done">Files whose compression is done at final quality (or found not worth it), since start.</param>
/// <param name="Final">Every first index is in force and neither pass has work left.</param>
internal readonly record struct CompressionTotals(long Pending, long Upgrading, long Done, bool Final);
