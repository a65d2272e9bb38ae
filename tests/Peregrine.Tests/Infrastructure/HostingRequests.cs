using System.Diagnostics.Metrics;
using Microsoft.Extensions.DependencyInjection;

namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// Counts requests that reached ASP.NET Core's hosting layer of this server (its
/// <c>http.server.request.duration</c>): the fast path's answers never do.
/// </summary>
public sealed class HostingRequests : IDisposable
{
    private readonly MeterListener _listener = new();
    private int _count;

    public HostingRequests(IServiceProvider services)
    {
        var factory = services.GetRequiredService<IMeterFactory>();
        _listener.InstrumentPublished = (instrument, listener) =>
        {
            if (instrument.Meter.Scope == factory && instrument.Name == "http.server.request.duration")
            {
                listener.EnableMeasurementEvents(instrument);
            }
        };
        _listener.SetMeasurementEventCallback<double>((_, _, _, _) => Interlocked.Increment(ref _count));
        _listener.Start();
    }

    public int Count => Volatile.Read(ref _count);

    public void Dispose() => _listener.Dispose();
}
