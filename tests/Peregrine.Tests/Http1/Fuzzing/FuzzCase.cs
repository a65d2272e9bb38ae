using System.Text;

namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// One connection's worth of input: the bytes (one to three pipelined requests, mutated) and
/// where the writes are split. Made from the seed and the case's index alone, so any case can
/// be made again on its own. The client never half-closes: Kestrel takes a FIN from the client
/// as the end of the connection and may drop the answer it was writing
/// (Http1Connection.OnInputOrOutputCompleted aborts the output), so that either server's answer
/// then varies from run to run; seen as "no answer, closed" for a plain GET without the fast path.
/// </summary>
/// <param name="Index">The case's number under its seed.</param>
/// <param name="Target">Which configuration it runs against.</param>
/// <param name="Bytes">What the client sends.</param>
/// <param name="Splits">Offsets where one write ends and the next begins, a few milliseconds later.</param>
/// <param name="Mutations">What was done to the requests, for the report.</param>
internal sealed record FuzzCase(int Index, int Target, byte[] Bytes, int[] Splits, string Mutations)
{
    public static readonly TimeSpan SplitDelay = TimeSpan.FromMilliseconds(5);

    public static FuzzCase Create(int seed, int index, IReadOnlyList<FuzzTarget> targets)
    {
        var random = new Random(Mix(seed, index));
        var target = random.Next(targets.Count);
        var requests = new RequestGenerator(random, targets[target]);
        var log = new StringBuilder();
        var pipeline = new List<List<string>>();
        for (var count = random.Next(10) switch { < 6 => 1, < 9 => 2, _ => 3 }; pipeline.Count < count;)
        {
            pipeline.Add(requests.Next());
        }

        // Line mutations first, on whole requests; then byte mutations anywhere in the stream.
        var mutations = random.Next(20) switch { < 7 => 0, < 16 => 1, < 19 => 2, _ => 3 };
        var onBytes = Enumerable.Range(0, mutations).Count(_ => random.Next(2) == 0);
        for (var i = onBytes; i < mutations; i++)
        {
            log.Append(requests.MutateLines(pipeline[random.Next(pipeline.Count)])).Append("; ");
        }

        var all = Encoding.Latin1.GetBytes(Serialise(pipeline));
        for (var i = 0; i < onBytes; i++)
        {
            log.Append(ByteMutations.Apply(random, ref all)).Append("; ");
        }

        if (random.Next(25) == 0)
        {
            var cut = random.Next(1, Math.Max(2, all.Length));
            log.Append("truncated at ").Append(cut).Append("; ");
            all = all[..cut];
        }

        return new FuzzCase(index, target, all, PlanWrites(random, all), log.Length == 0 ? "none" : log.ToString().TrimEnd(' ', ';'));
    }

    /// <summary>The request in readable form: CR, LF, NUL and bytes outside printable ASCII escaped.</summary>
    public string Escaped()
    {
        var text = new StringBuilder();
        foreach (var b in Bytes)
        {
            text.Append(b switch
            {
                (byte)'\r' => "\\r",
                (byte)'\n' => "\\n",
                (byte)'\t' => "\\t",
                (byte)'\\' => "\\\\",
                < 0x20 or >= 0x7F => $"\\x{b:X2}",
                _ => ((char)b).ToString(),
            });
        }

        return text.ToString();
    }

    private static string Serialise(List<List<string>> pipeline)
    {
        var text = new StringBuilder();
        foreach (var request in pipeline)
        {
            foreach (var line in request)
            {
                text.Append(line).Append("\r\n");
            }

            text.Append("\r\n");
        }

        return text.ToString();
    }

    /// <summary>Mostly one write; otherwise two or three, often between a CR and its LF.</summary>
    private static int[] PlanWrites(Random random, byte[] bytes)
    {
        var writes = random.Next(10) switch { < 6 => 1, < 9 => 2, _ => 3 };
        var splits = new SortedSet<int>();
        while (splits.Count < writes - 1 && bytes.Length > writes)
        {
            var at = random.Next(1, bytes.Length);
            if (random.Next(3) == 0 && bytes.AsSpan(at).IndexOf((byte)'\n') is var lf and >= 0)
            {
                at += lf;
            }

            splits.Add(Math.Clamp(at, 1, bytes.Length - 1));
        }

        return [.. splits];
    }

    // SplitMix64: a seed for each case that does not depend on the process (HashCode does).
    private static int Mix(int seed, int index)
    {
        var z = ((ulong)(uint)seed << 32 | (uint)index) + 0x9E3779B97F4A7C15;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB;
        return (int)(z ^ (z >> 31));
    }
}
