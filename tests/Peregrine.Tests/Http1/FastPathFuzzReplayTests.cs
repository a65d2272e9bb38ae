using Peregrine.Tests.Http1.Fuzzing;

namespace Peregrine.Tests.Http1;

/// <summary>
/// A short, fixed-seed run of the differential fuzzer (tests/Peregrine.Fuzz runs it at length):
/// a few hundred mutated requests, each sent to a server with the fast path and one without,
/// get the same statuses and leave the connection the same way. The run must also have had both
/// paths at work, or it would prove nothing.
/// </summary>
public sealed class FastPathFuzzReplayTests
{
    [Fact(Timeout = 120_000)]
    public async Task FixedSeed_MutatedRequests_GetTheSameAnswersWithAndWithoutTheFastPath()
    {
        await using var fuzzer = await DifferentialFuzzer.StartAsync();

        var report = await fuzzer.RunAsync(new FuzzRun(Seed: 20261122, First: 0, Count: 300, Parallelism: 16, Quiet: TimeSpan.FromMilliseconds(250)));

        Assert.True(report.Differences.Count == 0, report.Summary());
        Assert.True(report.FastPathOnly >= 30 && report.HandedOff >= 30, report.Summary());
    }
}
