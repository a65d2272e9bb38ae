using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Peregrine.Catalog;

/// <summary>
/// Holds the current snapshot. Readers take <see cref="Current"/> once per request and never
/// block; a new snapshot replaces the old one with a single reference write.
/// </summary>
internal sealed class FileCatalog
{
    private readonly PeregrineOptions _options;
    private readonly ILogger _logger;
    private readonly TaskCompletionSource _ready = new(TaskCreationOptions.RunContinuationsAsynchronously);
    private volatile CatalogSnapshot? _current;
    private int _started;

    public FileCatalog(IOptions<PeregrineOptions> options, ILoggerFactory loggerFactory)
    {
        _options = options.Value;
        _logger = loggerFactory.CreateLogger("Peregrine");
        Budget = new MemoryBudget(_options.MemoryBudget);
    }

    public PeregrineOptions Options => _options;

    /// <summary>The memory budget shared by file content and compressed variants.</summary>
    public MemoryBudget Budget { get; }

    /// <summary>The snapshot in force, or <see langword="null"/> before the first index is complete.</summary>
    public CatalogSnapshot? Current => _current;

    /// <summary>Completes when the first index is in force; faults if it failed.</summary>
    public Task Ready => _ready.Task;

    /// <summary>Starts the first index on the thread pool. Safe to call more than once.</summary>
    public void Start()
    {
        if (Interlocked.Exchange(ref _started, 1) == 0)
        {
            _ = Task.Run(BuildFirst);
        }
    }

    private void BuildFirst()
    {
        try
        {
            _current = new CatalogBuilder(_options, Budget, _logger).Build();
            _ready.TrySetResult();
        }
        catch (Exception ex)
        {
            // Kept as the Ready fault: requests then answer 503 rather than hang.
            PeregrineLog.IndexFailed(_logger, _options.Root, ex);
            _ready.TrySetException(ex);
        }
    }
}
