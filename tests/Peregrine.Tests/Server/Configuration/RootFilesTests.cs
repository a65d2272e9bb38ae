using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;

namespace Peregrine.Tests.Server.Configuration;

/// <summary>
/// An option that names a file under ROOT (<c>--spa</c>, <c>--404</c>) stops start-up when the
/// file is not there, with the option and its source named and the other errors beside it.
/// </summary>
public sealed class RootFilesTests : IDisposable
{
    private readonly TempTree _tree = new();

    public RootFilesTests()
    {
        _tree.Write("index.html", "shell");
        _tree.Write("app/shell.html", "app shell");
        _tree.Write("errors/404.html", "gone");
    }

    public void Dispose() => _tree.Dispose();

    private LoadResult Load(string[] args, params (string Name, string Value)[] environment)
        => SettingsLoader.Load([_tree.Root, .. args], environment.ToDictionary(e => e.Name, e => e.Value));

    [Theory]
    [InlineData("--spa=nope.html", "--spa (command line): 'nope.html' does not exist under ROOT")]
    [InlineData("--spa=app/nope.html", "--spa (command line): 'app/nope.html' does not exist under ROOT")]
    [InlineData("--spa=app", "--spa (command line): 'app' is a folder, not a file, under ROOT")]
    [InlineData("--404=missing.html", "--404 (command line): 'missing.html' does not exist under ROOT")]
    [InlineData("--404=errors", "--404 (command line): 'errors' is a folder, not a file, under ROOT")]
    public void FileNotUnderRoot_StopsStartUpNamingTheOption(string flag, string message)
    {
        var loaded = Load([flag]);

        Assert.Null(loaded.Settings);
        Assert.Equal($"{message} ({_tree.Root}).", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void BareSpa_InARootWithoutIndexHtml_StopsStartUp()
    {
        File.Delete(Path.Combine(_tree.Root, "index.html"));

        var loaded = Load(["--spa"]);

        Assert.Equal($"--spa (command line): 'index.html' does not exist under ROOT ({_tree.Root}).", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void FilesThatAreThere_Start()
    {
        var loaded = Load(["--spa=app/shell.html", "--404", "errors/404.html"]);

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Equal("app/shell.html", settings.Spa);
        Assert.Equal("errors/404.html", settings.NotFoundPage);
    }

    [Fact]
    public void NotFoundPageLeftToItsDefault_WithoutA404Html_Starts()
    {
        // 404.html is used when the root has one; the built-in page otherwise.
        var loaded = Load([]);

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Null(settings.NotFoundPage);
    }

    [Fact]
    public void MissingFiles_AreReportedWithTheOtherErrors_EachUnderItsSource()
    {
        var loaded = Load(["--404", "missing.html", "--port", "http"], ("PEREGRINE_SPA", "nope.html"));

        Assert.Null(loaded.Settings);
        Assert.Equal(3, loaded.Errors.Count);
        Assert.Contains(loaded.Errors, e => e.StartsWith("--port (command line): ", StringComparison.Ordinal));
        Assert.Contains(loaded.Errors, e => e.StartsWith("PEREGRINE_SPA (environment): 'nope.html' does not exist under ROOT", StringComparison.Ordinal));
        Assert.Contains(loaded.Errors, e => e.StartsWith("--404 (command line): 'missing.html' does not exist under ROOT", StringComparison.Ordinal));
    }

    [Fact]
    public void MissingFileOverriddenByAHigherSource_IsNotLookedFor()
    {
        // Only the value in force is looked for: the command line names a file that is there.
        var config = _tree.Write("peregrine.json", """{"spa": "nope.html", "404": "missing.html"}""");

        var loaded = Load(["--config", config, "--spa=app/shell.html"], ("PEREGRINE_404", "errors/404.html"));

        Assert.Empty(loaded.Errors);
        loaded.Settings!.Dispose();
    }

    [Fact]
    public void SecondFolderAfterBareSpa_IsTheOnlyError()
    {
        // "--spa ." meant --spa=.: which folder was to be served is in doubt, so no file is looked for in it.
        File.Delete(Path.Combine(_tree.Root, "index.html"));

        var loaded = Load(["--spa", "."]);

        Assert.StartsWith("ROOT (command line): '.' is a second folder", Assert.Single(loaded.Errors), StringComparison.Ordinal);
    }

    [Fact]
    public async Task Server_WithAMissingSpaFile_ExitsWithTheMessage_AndServesNothing()
    {
        using var process = ServerProcess.Start(_tree.Root, "--port", "0", "--spa=nope.html");

        Assert.Equal(2, await process.WaitForExitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal(
            $"peregrine: --spa (command line): 'nope.html' does not exist under ROOT ({_tree.Root}).",
            Assert.Single(process.Errors.Split('\n', StringSplitOptions.RemoveEmptyEntries)));
        Assert.DoesNotContain("Peregrine serving", process.Output);
    }
}
