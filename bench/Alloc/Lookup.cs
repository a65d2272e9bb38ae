// Does the catalog lookup slow down with the size of the tree? Builds snapshots of 100,
// 100,000 and 1,000,000 paths (1000 folders of 1000 files) and times TryFind for random
// existing paths, from a pre-built list of 100,000 keys, in-process: the lookup alone, with no
// HTTP and no file content in play.
//
//   dotnet run -c Release --project bench/Alloc -- lookup
using System.Diagnostics;
using Peregrine.Catalog;

static class Lookup
{
    public static void Run()
    {
        Console.WriteLine("| paths in the snapshot | ns per lookup (5 rounds of 10M) | median |");
        Console.WriteLine("| ---: | --- | ---: |");
        foreach (var size in new[] { 100, 100_000, 1_000_000 })
        {
            var keys = new List<string>(size);
            for (var i = 0; i < size; i++)
            {
                keys.Add($"/d{i / 1000:D4}/f{i % 1000:D4}-{i * 2654435761L % 1000003:D7}.css");
            }

            var entry = CatalogEntry.ForDirectoryRedirect("/x", "/x/");
            var snapshot = new CatalogSnapshot(keys.ToDictionary(k => k, _ => entry), size, 0, 0, "/", default);
            var random = new Random(1);
            var probes = Enumerable.Range(0, 100_000).Select(_ => keys[random.Next(size)].ToCharArray()).ToArray();
            var rounds = new List<double>();
            for (var round = 0; round < 6; round++)
            {
                var found = 0;
                var stopwatch = Stopwatch.StartNew();
                for (var i = 0; i < 10_000_000; i++)
                {
                    if (snapshot.TryFind(probes[i % probes.Length], out _))
                    {
                        found++;
                    }
                }

                stopwatch.Stop();
                if (found != 10_000_000)
                {
                    throw new InvalidOperationException("a key was not found");
                }

                if (round > 0)
                {
                    rounds.Add(stopwatch.Elapsed.TotalNanoseconds / 10_000_000);
                }
            }

            rounds.Sort();
            Console.WriteLine($"| {size:N0} | {string.Join(", ", rounds.Select(r => r.ToString("F1")))} | {rounds[2]:F1} |");
        }
    }
}
