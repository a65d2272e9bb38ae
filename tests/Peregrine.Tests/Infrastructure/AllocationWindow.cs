namespace Peregrine.Tests.Infrastructure;

/// <summary>
/// Bytes a piece of code allocates on this thread. In a full run, with tests allocating in
/// parallel, a window in which a collection ran once read tens of kilobytes for code that
/// allocates nothing (RangeParserTests, AcceptEncodingTests), and never alone; so a window in
/// which a gen-0 collection ran is measured again, up to a hundred times (five were not always
/// enough while other tests allocated fast), and the last window is reported. A window without
/// one must read the true figure, so the body should be short: a thousand calls, not millions.
/// </summary>
internal static class AllocationWindow
{
    public static long Measure(Action body)
    {
        long allocated;
        var windows = 0;
        do
        {
            var collections = GC.CollectionCount(0);
            var before = GC.GetAllocatedBytesForCurrentThread();
            body();
            allocated = GC.GetAllocatedBytesForCurrentThread() - before;
            if (GC.CollectionCount(0) == collections)
            {
                break;
            }
        }
        while (++windows < 100);

        return allocated;
    }
}
