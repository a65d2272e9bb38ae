using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// Sends mutated requests to a server with the fast path and to one without (same tree, same
/// options, same limits) and compares, case by case, the status of each response, their number,
/// and how the connection stood at the end (closed, or open and quiet: still waiting). A
/// difference is confirmed by running the case again with a quiet period eight times as long,
/// so that a server merely slow to answer under load is not taken for one that never does; the
/// cases that agreed on the second run are counted as retried. Deterministic for a seed: each
/// case is made from the seed and its index alone (<see cref="FuzzCase.Create"/>).
/// </summary>
public sealed class DifferentialFuzzer : IAsyncDisposable
{
    private readonly TempTree _tree;
    private readonly FuzzTarget[] _targets;

    private DifferentialFuzzer(TempTree tree, FuzzTarget[] targets)
    {
        _tree = tree;
        _targets = targets;
    }

    public static async Task<DifferentialFuzzer> StartAsync()
    {
        var tree = new TempTree();
        FuzzTarget.WriteTree(tree);
        return new DifferentialFuzzer(tree, await FuzzTarget.StartAllAsync(tree.Root));
    }

    public async Task<FuzzReport> RunAsync(FuzzRun run, Action<string>? progress = null, CancellationToken cancellationToken = default)
    {
        var report = new FuzzReport();
        var differences = new ConcurrentBag<(int Index, string Text)>();
        var outcomes = new ConcurrentDictionary<string, int>();
        var clock = Stopwatch.StartNew();
        var done = 0;
        var parallel = new ParallelOptions { MaxDegreeOfParallelism = run.Parallelism, CancellationToken = cancellationToken };
        await Parallel.ForEachAsync(Enumerable.Range(run.First, run.Count), parallel, async (index, _) =>
        {
            var fuzzCase = FuzzCase.Create(run.Seed, index, _targets);
            var (plain, fast, handedOff) = await ExchangeBothAsync(fuzzCase, run.Quiet);
            if (plain != fast)
            {
                var first = Describe(run.Seed, fuzzCase, plain, fast, handedOff);
                (plain, fast, handedOff) = await ExchangeBothAsync(fuzzCase, run.Quiet * 8);
                if (plain != fast)
                {
                    differences.Add((index, Describe(run.Seed, fuzzCase, plain, fast, handedOff)));
                }
                else
                {
                    Interlocked.Increment(ref report.Retried);
                    progress?.Invoke("agreed when run again: " + first);
                }
            }

            Interlocked.Increment(ref handedOff ? ref report.HandedOff : ref report.FastPathOnly);
            outcomes.AddOrUpdate(fast.ToString(), 1, (_, n) => n + 1);
            if (Interlocked.Increment(ref done) % 5000 == 0)
            {
                progress?.Invoke($"{done} cases, {differences.Count} differences, {clock.Elapsed.TotalSeconds:F0} s");
            }
        });

        report.Cases = run.Count;
        report.Elapsed = clock.Elapsed;
        report.Differences = [.. differences.OrderBy(d => d.Index).Select(d => d.Text)];
        report.Outcomes = [.. outcomes.OrderByDescending(o => o.Value)];
        return report;
    }

    /// <summary>One case, made again and run once, described in full.</summary>
    public async Task<string> ReplayAsync(int seed, int index, TimeSpan quiet)
    {
        var fuzzCase = FuzzCase.Create(seed, index, _targets);
        var (plain, fast, handedOff) = await ExchangeBothAsync(fuzzCase, quiet);
        return Describe(seed, fuzzCase, plain, fast, handedOff);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var target in _targets)
        {
            await target.DisposeAsync();
        }

        _tree.Dispose();
    }

    private async Task<(ConnectionOutcome Plain, ConnectionOutcome Fast, bool HandedOff)> ExchangeBothAsync(FuzzCase fuzzCase, TimeSpan quiet)
    {
        var target = _targets[fuzzCase.Target];
        var plain = ConnectionOutcome.ExchangeAsync(target.Pair.Plain.Address, fuzzCase, quiet);
        var fast = await ConnectionOutcome.ExchangeAsync(target.Pair.Fast.Address, fuzzCase, quiet);
        return ((await plain).Outcome, fast.Outcome, target.Pair.Recorder.TakeHandedOff(fast.ClientPort));
    }

    private string Describe(int seed, FuzzCase fuzzCase, ConnectionOutcome plain, ConnectionOutcome fast, bool handedOff)
        => new StringBuilder()
            .AppendLine($"case {fuzzCase.Index} (seed {seed}), {_targets[fuzzCase.Target].Setup.Name}: {fuzzCase.Mutations}")
            .AppendLine($"  sent: {fuzzCase.Escaped()}")
            .AppendLine($"  writes split at [{string.Join(", ", fuzzCase.Splits)}]")
            .AppendLine($"  without fast path: {plain}")
            .Append($"  with fast path:    {fast} ({(handedOff ? "handed to Kestrel" : "fast path only")})")
            .ToString();
}

/// <param name="Seed">Chooses every case.</param>
/// <param name="First">The index of the first case.</param>
/// <param name="Count">How many cases.</param>
/// <param name="Parallelism">How many cases run at once (each opens two connections).</param>
/// <param name="Quiet">How long a connection may stay silent before it counts as open and waiting.</param>
public sealed record FuzzRun(int Seed, int First, int Count, int Parallelism, TimeSpan Quiet);

public sealed class FuzzReport
{
    public int Cases;

    /// <summary>Connections the fast-path server kept to the end (every answer, if any, its own).</summary>
    public int FastPathOnly;

    /// <summary>Connections it handed to Kestrel, at the first request or after answering some.</summary>
    public int HandedOff;

    /// <summary>Cases that differed once and agreed when run again with a longer quiet period.</summary>
    public int Retried;

    public List<string> Differences = [];

    /// <summary>How often each outcome of the fast-path server was seen, most frequent first.</summary>
    public List<KeyValuePair<string, int>> Outcomes = [];

    public TimeSpan Elapsed;

    public string Summary(int outcomes = 12)
    {
        var text = new StringBuilder()
            .AppendLine($"{Cases} cases in {Elapsed.TotalSeconds:F1} s: {Differences.Count} differences, {Retried} agreed only when run again")
            .AppendLine($"fast-path server: {FastPathOnly} connections kept by the fast path, {HandedOff} handed to Kestrel")
            .AppendLine("most frequent outcomes:");
        foreach (var (outcome, count) in Outcomes.Take(outcomes))
        {
            text.AppendLine($"  {count,7}  {outcome}");
        }

        foreach (var difference in Differences)
        {
            text.AppendLine(difference);
        }

        return text.ToString();
    }
}
