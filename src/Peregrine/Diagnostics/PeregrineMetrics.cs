using System.Diagnostics.Metrics;

namespace Peregrine.Diagnostics;

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
    private Func<long>? _filesIndexed;

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

        // An up-down counter rather than a gauge: a count of things present adds up across
        // servers (the OpenTelemetry guidance for "how many are there now").
        Meter.CreateObservableUpDownCounter("peregrine.files.indexed", ObserveFilesIndexed, "{file}", "Files in the index in force.");
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
        _requests.Add(1, new KeyValuePair<string, object?>(StatusCodeTag, BoxedStatusCode(statusCode)));
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
    /// Sets where <c>peregrine.files.indexed</c> reads its value when an exporter collects.
    /// Until it is set, nothing is reported.
    /// </summary>
    public void SetFilesIndexedSource(Func<long> filesIndexed)
    {
        ArgumentNullException.ThrowIfNull(filesIndexed);
        Volatile.Write(ref _filesIndexed, filesIndexed);
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
