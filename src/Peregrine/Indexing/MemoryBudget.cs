namespace Peregrine.Indexing;

/// <summary>
/// The bytes of file content and compressed variants held in memory, against the one limit of
/// <see cref="PeregrineOptions.MemoryBudget"/>. Thread-safe; reservations never overshoot.
/// </summary>
internal sealed class MemoryBudget
{
    private long _used;

    public MemoryBudget(long limit)
    {
        Limit = limit;
    }

    public long Limit { get; }

    public long Used => Interlocked.Read(ref _used);

    public bool TryReserve(long bytes)
    {
        while (true)
        {
            var used = Interlocked.Read(ref _used);
            if (bytes > Limit - used)
            {
                return false;
            }

            if (Interlocked.CompareExchange(ref _used, used + bytes, used) == used)
            {
                return true;
            }
        }
    }

    /// <summary>Told of every byte given back, so that content a writer keeps replacing does not pile up in gen 2.</summary>
    public RetiredContent Retired { get; } = new();

    public void Release(long bytes)
    {
        Interlocked.Add(ref _used, -bytes);
        Retired.Add(bytes);
    }
}
