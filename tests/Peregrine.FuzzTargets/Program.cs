using Peregrine.Tests.Fuzzing;
using SharpFuzz;

// One parser fuzz target under AFL++ (tests/fuzz/run starts it):
//
//   afl-fuzz -i tests/fuzz/corpus/TARGET -o OUT -- dotnet Peregrine.FuzzTargets.dll TARGET
//
// or, without AFL, `dotnet Peregrine.FuzzTargets.dll TARGET FILE...` runs the target on each
// file and prints the first property that fails.
if (args.Length == 0 || !ParserTargets.All.TryGetValue(args[0], out var target))
{
    Console.Error.WriteLine($"usage: Peregrine.FuzzTargets TARGET [FILE...]; targets: {string.Join(", ", ParserTargets.All.Keys)}");
    return 2;
}

if (args.Length > 1)
{
    var failed = 0;
    foreach (var file in args[1..])
    {
        try
        {
            target(File.ReadAllBytes(file));
        }
        catch (Exception e)
        {
            failed++;
            Console.WriteLine($"{file}: {e.GetType().Name}: {e.Message}");
        }
    }

    Console.WriteLine($"{args.Length - 1} inputs, {failed} failed");
    return failed == 0 ? 0 : 1;
}

// Persistent mode: one process runs many inputs; an exception is a crash to AFL.
Fuzzer.Run(stream =>
{
    using var copy = new MemoryStream();
    stream.CopyTo(copy);
    target(copy.ToArray());
});
return 0;
