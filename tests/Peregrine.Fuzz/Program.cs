using System.Diagnostics;
using Peregrine.Tests.Http1.Fuzzing;

// Differential fuzzer for the HTTP/1.1 fast path: mutated requests to a server with the fast
// path and one without, compared by status codes, number of responses and connection state.
//
//   dotnet run -c Release --project tests/Peregrine.Fuzz -- [--seed N] [--cases N] [--first N]
//       [--parallel N] [--quiet-ms N] [--replay INDEX]
//
// Exits 1 if any difference is found.
var seed = Option("--seed", 1);
var cases = Option("--cases", 100_000);
var first = Option("--first", 0);
var parallel = Option("--parallel", 32);
var quiet = TimeSpan.FromMilliseconds(Option("--quiet-ms", 250));
var replay = Option("--replay", -1);

await using var fuzzer = await DifferentialFuzzer.StartAsync();
if (replay >= 0)
{
    Console.WriteLine(await fuzzer.ReplayAsync(seed, replay, quiet));
    return 0;
}

var process = Process.GetCurrentProcess();
var cpu = process.TotalProcessorTime;
Console.WriteLine($"seed {seed}, cases {first}..{first + cases - 1}, {parallel} at once, quiet period {quiet.TotalMilliseconds} ms");
var report = await fuzzer.RunAsync(new FuzzRun(seed, first, cases, parallel, quiet), Console.WriteLine);
Console.Write(report.Summary());
process.Refresh();
Console.WriteLine($"CPU time {(process.TotalProcessorTime - cpu).TotalSeconds:F0} s");
return report.Differences.Count == 0 ? 0 : 1;

int Option(string name, int fallback)
{
    var at = Array.IndexOf(args, name);
    return at >= 0 && at + 1 < args.Length ? int.Parse(args[at + 1]) : fallback;
}
