namespace Peregrine.Tests.Fuzzing;

/// <summary>
/// Replays the parser fuzz corpus (tests/fuzz/corpus/TARGET/*: the seeds, the inputs AFL++
/// found that reach new code, and every input that ever failed) through
/// <see cref="ParserTargets"/>: each must keep every property the fuzzer checks.
/// </summary>
public sealed class ParserCorpusTests
{
    private static readonly string Corpus = Path.Combine(AppContext.BaseDirectory, "fuzz-corpus");

    public static TheoryData<string> Targets => new(ParserTargets.All.Keys);

    [Theory]
    [MemberData(nameof(Targets))]
    public void CorpusInputs_KeepEveryProperty(string target)
    {
        var files = Directory.GetFiles(Path.Combine(Corpus, target));
        Assert.NotEmpty(files);
        var failures = new List<string>();
        foreach (var file in files)
        {
            try
            {
                ParserTargets.All[target](File.ReadAllBytes(file));
            }
            catch (Exception e)
            {
                failures.Add($"{Path.GetFileName(file)}: {e.GetType().Name}: {e.Message}");
            }
        }

        Assert.True(failures.Count == 0, string.Join("\n", failures));
    }

    [Fact]
    public void EveryCorpusFolder_IsATarget()
        => Assert.Equal(ParserTargets.All.Keys.Order(), Directory.GetDirectories(Corpus).Select(Path.GetFileName).Order()!);
}
