using Microsoft.Extensions.Logging.Console;
using Microsoft.Extensions.Options;

namespace Peregrine.Server.Hosting;

/// <summary>
/// The console logger, as a start-up that may fail needs it. Two things differ from the console
/// provider itself. The host's "Hosting failed to start"
/// (<c>Microsoft.Extensions.Hosting.Internal.Host</c>, event 11) is left out when its exception is
/// one the server reports itself in one line: a port it cannot listen on (<see cref="IOException"/>) or
/// an invalid option (<see cref="OptionsValidationException"/>), the two that Program catches
/// around <c>StartAsync</c>. Without this, several KB of stack trace come before that line.
/// And lines below Warning logged before the server listens are held until it does
/// (<see cref="Started"/>, at <c>ApplicationStarted</c>), then written in order; a start that
/// fails drops them. The first index begins when the pipeline is built, which the host does
/// before Kestrel binds, so its "Indexed" line (and the platform line) would otherwise come out
/// beside "cannot listen on", as though something were being served. Warnings and errors are
/// written at once. Logger filters see a category and a level but no event or exception, hence
/// a wrapper.
/// </summary>
[ProviderAlias("Console")]
internal sealed class ReportedStartupFailure : ILoggerProvider, ISupportExternalScope
{
    private const string HostCategory = "Microsoft.Extensions.Hosting.Internal.Host";

    private const int HostedServiceStartupFaulted = 11;

    private readonly ConsoleLoggerProvider _console;
    private readonly Lock _gate = new();

    // The writes held until the server listens; null once it does.
    private List<Action>? _held = [];

    private ReportedStartupFailure(ConsoleLoggerProvider console)
    {
        _console = console;
    }

    /// <summary>The provider <see cref="Install"/> put in <paramref name="services"/>, if it is there.</summary>
    public static ReportedStartupFailure? In(IServiceProvider services)
        => services.GetServices<ILoggerProvider>().OfType<ReportedStartupFailure>().FirstOrDefault();

    /// <summary>The server listens: writes the lines held until now, and every line from now on as it comes.</summary>
    public void Started()
    {
        lock (_gate)
        {
            // Under the lock, so that a line logged meanwhile waits for the earlier ones.
            foreach (var write in _held ?? [])
            {
                write();
            }

            _held = null;
        }
    }

    /// <summary>Puts this in the place of the console provider that <c>AddSimpleConsole</c> registered.</summary>
    public static void Install(ILoggingBuilder logging)
    {
        var services = logging.Services;
        for (var i = services.Count - 1; i >= 0; i--)
        {
            if (services[i].ServiceType == typeof(ILoggerProvider) && services[i].ImplementationType == typeof(ConsoleLoggerProvider))
            {
                services.RemoveAt(i);
            }
        }

        services.AddSingleton<ILoggerProvider>(provider => new ReportedStartupFailure(new ConsoleLoggerProvider(
            provider.GetRequiredService<IOptionsMonitor<ConsoleLoggerOptions>>(),
            provider.GetServices<ConsoleFormatter>())));
    }

    /// <summary>True for the start-up failures Program reports in one line of its own.</summary>
    public static bool IsReported(Exception? exception) => exception is IOException or OptionsValidationException;

    public ILogger CreateLogger(string categoryName) => new StartupLogger(this, _console.CreateLogger(categoryName), categoryName == HostCategory);

    public void SetScopeProvider(IExternalScopeProvider scopeProvider) => _console.SetScopeProvider(scopeProvider);

    public void Dispose()
    {
        lock (_gate)
        {
            // A start that failed: what it held is not written.
            _held = null;
        }

        _console.Dispose();
    }

    /// <summary>True if <paramref name="write"/> was held for <see cref="Started"/>; false once the server listens.</summary>
    private bool Hold(Action write)
    {
        lock (_gate)
        {
            _held?.Add(write);
            return _held is not null;
        }
    }

    private sealed class StartupLogger(ReportedStartupFailure owner, ILogger console, bool host) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull
            => console.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => console.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (host && eventId.Id == HostedServiceStartupFaulted && IsReported(exception))
            {
                return;
            }

            // The volatile read first: once the server listens, no closure is made.
            if (logLevel < LogLevel.Warning && Volatile.Read(ref owner._held) is not null
                && owner.Hold(() => console.Log(logLevel, eventId, state, exception, formatter)))
            {
                return;
            }

            console.Log(logLevel, eventId, state, exception, formatter);
        }
    }
}
