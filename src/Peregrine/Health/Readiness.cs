using Peregrine.Indexing;
using Peregrine.Live;

namespace Peregrine.Health;

/// <summary>
/// Whether a catalog serves files: the one answer behind both <c>UsePeregrineHealth</c> and
/// the <see cref="PeregrineHealthCheck"/> of <c>MapHealthChecks</c>.
/// </summary>
internal enum Readiness
{
    /// <summary>The first index is being built; requests wait for it.</summary>
    Starting,

    /// <summary>The first index is in force.</summary>
    Ready,

    /// <summary>The first index failed (the reason is in the log); file requests get 503.</summary>
    Failed,
}

internal static class CatalogReadiness
{
    /// <summary>The readiness of <paramref name="catalog"/>, and its snapshot in force when ready.</summary>
    public static Readiness Of(FileCatalog catalog, out CatalogSnapshot? snapshot)
    {
        var ready = catalog.Ready;
        snapshot = catalog.Current;
        return ready.IsCompletedSuccessfully && snapshot is not null ? Readiness.Ready
            : ready.IsCompleted ? Readiness.Failed
            : Readiness.Starting;
    }
}
