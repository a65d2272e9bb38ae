using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Architecture;

/// <summary>
/// No source file is over <see cref="MaxLines"/> lines (docs/architecture.md, "File length"): a
/// type that grows past it is split into partial files by concern (<c>Type.Concern.cs</c>). A
/// file that must stay longer, because its single protocol needs the length, is named in
/// <see cref="s_exceptions"/> and, with the reason, in the doc.
/// </summary>
public sealed class FileLengthTests
{
    private const int MaxLines = 400;

    // The files allowed over MaxLines, as paths under src/ with '/' ("Peregrine/Live/X.cs"): the
    // list docs/architecture.md gives (as `src/Peregrine/Live/X.cs`), with the reason for each. None.
    private static readonly string[] s_exceptions = [];

    [Fact]
    public void SourceFiles_AreAtMostMaxLines_ButTheExceptions()
    {
        var files = SourceFiles();

        var over = files
            .Where(file => file.Lines > MaxLines && !s_exceptions.Contains(file.Path, StringComparer.Ordinal))
            .Select(file => $"{file.Path}: {file.Lines} lines")
            .ToList();

        // The walk found the sources: a wrong root would pass with nothing to check.
        Assert.Contains(files, file => file.Path == "Peregrine/Serving/PeregrineMiddleware.cs");
        Assert.True(over.Count == 0, $"over {MaxLines} lines (split the type by concern, docs/architecture.md, \"File length\"):{Environment.NewLine}"
            + string.Join(Environment.NewLine, over));
    }

    [Fact]
    public void Exceptions_AreOverMaxLines_AndNamedInTheDoc()
    {
        var files = SourceFiles().ToDictionary(file => file.Path, file => file.Lines, StringComparer.Ordinal);
        var doc = File.ReadAllText(Path.Combine(RepositoryRoot.Path, "docs", "architecture.md"));

        foreach (var exception in s_exceptions)
        {
            Assert.True(files.TryGetValue(exception, out var lines), $"{exception} is not a file under src/");
            Assert.True(lines > MaxLines, $"{exception} has {lines} lines: no longer an exception, take it off the list and out of the doc");
            Assert.True(doc.Contains("`src/" + exception + "`", StringComparison.Ordinal), $"src/{exception} is not named in docs/architecture.md");
        }
    }

    /// <summary>Every C# file under src/ (build output left out), by path under src/ with '/', and its number of lines.</summary>
    private static List<(string Path, int Lines)> SourceFiles()
    {
        var src = Path.Combine(RepositoryRoot.Path, "src");
        return Directory.EnumerateFiles(src, "*.cs", SearchOption.AllDirectories)
            .Select(path => Path.GetRelativePath(src, path).Replace(Path.DirectorySeparatorChar, '/'))
            .Where(path => !path.Split('/').Any(part => part is "bin" or "obj"))
            .Order(StringComparer.Ordinal)
            .Select(path => (path, File.ReadLines(Path.Combine(src, path)).Count()))
            .ToList();
    }
}
