using Microsoft.Extensions.Logging.Console;
using Microsoft.Extensions.Options;

namespace Peregrine.Server.Hosting;

/// <summary>
/// The console logger, less the host's "Hosting failed to start"
/// (<c>Microsoft.Extensions.Hosting.Internal.Host</c>, event 11) when its exception is one the
/// server reports itself in one line: a port it cannot listen on (<see cref="IOException"/>) or
/// an invalid option (<see cref="OptionsValidationException"/>), the two that Program catches
/// around <c>StartAsync</c>. Without this, several KB of stack trace come before that line.
/// Every other event, and this one with any other exception, is written as before. Logger
/// filters see a category and a level but no event or exception, hence a wrapper.
/// </summary>
[ProviderAlias("Console")]
internal sealed class ReportedStartupFailure : ILoggerProvider, ISupportExternalScope
{
    private const string HostCategory = "Microsoft.Extensions.Hosting.Internal.Host";

    private const int HostedServiceStartupFaulted = 11;

    private readonly ConsoleLoggerProvider _console;

    private ReportedStartupFailure(ConsoleLoggerProvider console)
    {
        _console = console;
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

    public ILogger CreateLogger(string categoryName)
    {
        var logger = _console.CreateLogger(categoryName);
        return categoryName == HostCategory ? new HostLogger(logger) : logger;
    }

    public void SetScopeProvider(IExternalScopeProvider scopeProvider) => _console.SetScopeProvider(scopeProvider);

    public void Dispose() => _console.Dispose();

    private sealed class HostLogger(ILogger console) : ILogger
    {
        public IDisposable? BeginScope<TState>(TState state)
            where TState : notnull
            => console.BeginScope(state);

        public bool IsEnabled(LogLevel logLevel) => console.IsEnabled(logLevel);

        public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
        {
            if (eventId.Id == HostedServiceStartupFaulted && IsReported(exception))
            {
                return;
            }

            console.Log(logLevel, eventId, state, exception, formatter);
        }
    }
}
