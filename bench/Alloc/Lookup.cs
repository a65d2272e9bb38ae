// Does the catalog lookup slow down with the size of the tree? Builds snapshots of 100,
// 100,000 and 1,000,000 paths (1000 folders of 1000 files, one entry object per path) and times
// lookups in-process, with no HTTP and no file content in play, for two request streams:
//
// - hot: the same 100 paths over and over (spread over the tree), as real traffic concentrates
//   on a few pages and assets: the question "do ordinary files slow down in a big tree?";
// - uniform: random paths over the whole tree (100,000 pre-built probes), the worst case, where
//   a big table cannot stay in the CPU caches.
//
// Each lookup also reads a field of the entry it found, as a request does. Peregrine's index
// (CatalogSnapshot.TryFind) is timed against a FrozenDictionary with a span alternate lookup
// (what the snapshot used before) in the same run, rounds interleaved.
//
//   taskset -c 1 dotnet run -c Release --project bench/Alloc -- lookup
using System.Collections.Frozen;
using System.Diagnostics;
using Peregrine.Indexing;
using Peregrine.Sources;

static class Lookup
{
    private const int Rounds = 5;
    private const int LookupsPerRound = 5_000_000;

    public static void Run()
    {
        Console.WriteLine("ns per lookup, median of 5 rounds of 5M (min-max)");
        Console.WriteLine();
        Console.WriteLine("| paths in the snapshot | requests | Peregrine index | FrozenDictionary (before) |");
        Console.WriteLine("| ---: | --- | ---: | ---: |");
        // The 100-path table is measured twice and only the second is printed: the first run
        // compiles and tiers up every method, which would otherwise fall on the first row.
        foreach (var (size, print) in new[] { (100, false), (100, true), (100_000, true), (1_000_000, true) })
        {
            var entries = new Dictionary<string, CatalogEntry>(size, StringComparer.Ordinal);
            var keys = new string[size];
            for (var i = 0; i < size; i++)
            {
                var key = $"/d{i / 1000:D4}/f{i % 1000:D4}-{i * 2654435761L % 1000003:D7}.css";
                keys[i] = key;
                entries[key] = CatalogEntry.ForDirectoryRedirect(key, key + "/");
            }

            var snapshot = new CatalogSnapshot(entries, size, 0, [new Mount("", "/", "/", default, null, 0)]);
            var frozen = entries.ToFrozenDictionary(StringComparer.Ordinal).GetAlternateLookup<ReadOnlySpan<char>>();
            var random = new Random(1);
            var streams = new (string Name, char[][] Probes)[]
            {
                ("hot: the same 100 paths", Enumerable.Range(0, 100).Select(i => keys[(int)((long)i * size / 100)].ToCharArray()).ToArray()),
                ("uniform over the tree", Enumerable.Range(0, 100_000).Select(_ => keys[random.Next(size)].ToCharArray()).ToArray()),
            };

            foreach (var (name, probes) in streams)
            {
                var ours = new List<double>();
                var theirs = new List<double>();
                for (var round = 0; round <= Rounds; round++)
                {
                    // Round 0 warms both up (tiered JIT, caches) and is not counted.
                    var a = Time(probes, new Ours(snapshot));
                    var b = Time(probes, new Frozen(frozen));
                    if (round > 0)
                    {
                        ours.Add(a);
                        theirs.Add(b);
                    }
                }

                if (print)
                {
                    Console.WriteLine($"| {size:N0} | {name} | {Summary(ours)} | {Summary(theirs)} |");
                }
            }
        }
    }

    private interface IFinder
    {
        int Find(char[] path);
    }

    // Structs, so that each finder gets its own compiled loop with the call inlined.
    private readonly struct Ours(CatalogSnapshot snapshot) : IFinder
    {
        public int Find(char[] path) => snapshot.TryFind(path, out var entry) ? entry.RedirectPath!.Length : -1;
    }

    private readonly struct Frozen(FrozenDictionary<string, CatalogEntry>.AlternateLookup<ReadOnlySpan<char>> frozen) : IFinder
    {
        public int Find(char[] path) => frozen.TryGetValue(path, out var entry) ? entry.RedirectPath!.Length : -1;
    }

    private static double Time<TFinder>(char[][] probes, TFinder finder)
        where TFinder : struct, IFinder
    {
        long sum = 0;
        var stopwatch = Stopwatch.StartNew();
        for (var i = 0; i < LookupsPerRound; i++)
        {
            var found = finder.Find(probes[i % probes.Length]);
            if (found < 0)
            {
                throw new InvalidOperationException("a key was not found");
            }

            sum += found;
        }

        stopwatch.Stop();
        GC.KeepAlive(sum);
        return stopwatch.Elapsed.TotalNanoseconds / LookupsPerRound;
    }

    private static string Summary(List<double> values)
    {
        values.Sort();
        return $"{values[values.Count / 2]:F1} ({values[0]:F1}-{values[^1]:F1})";
    }
}
