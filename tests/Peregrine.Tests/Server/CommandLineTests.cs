using Peregrine.Server;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server;

public sealed class CommandLineTests
{
    [Fact]
    public void NoArguments_ServesCurrentFolderOnLoopback8080()
    {
        var parsed = CommandLine.TryParse([], out var error);

        Assert.Null(error);
        Assert.Equal(".", parsed!.Root);
        Assert.Equal(8080, parsed.Port);
        Assert.Equal("127.0.0.1", parsed.Host);
    }

    [Fact]
    public void RootPortAndHost_AreRead()
    {
        using var tree = new TempTree();

        var parsed = CommandLine.TryParse([tree.Root, "--port", "0", "--host=0.0.0.0"], out var error);

        Assert.Null(error);
        Assert.Equal(tree.Root, parsed!.Root);
        Assert.Equal(0, parsed.Port);
        Assert.Equal("0.0.0.0", parsed.Host);
    }

    [Theory]
    [InlineData(new[] { "--port", "http" }, "--port")]
    [InlineData(new[] { "--port", "70000" }, "--port")]
    [InlineData(new[] { "--port", "-1" }, "--port")]
    [InlineData(new[] { "--port" }, "--port")]
    [InlineData(new[] { "--host", "not an address" }, "--host")]
    [InlineData(new[] { "--frobnicate" }, "--frobnicate")]
    [InlineData(new[] { "/no/such/folder/anywhere" }, "ROOT")]
    [InlineData(new[] { ".", "." }, "only one ROOT")]
    public void BadArgument_FailsWithOneLineNamingIt(string[] args, string named)
    {
        var parsed = CommandLine.TryParse(args, out var error);

        Assert.Null(parsed);
        Assert.Contains(named, error);
        Assert.DoesNotContain("\n", error!);
    }

    [Fact]
    public void Help_ListsEveryOption()
    {
        var parsed = CommandLine.TryParse(["--help"], out _);

        Assert.True(parsed!.ShowHelp);
        foreach (var option in new[] { "--port", "--host", "--quiet", "--version", "--help" })
        {
            Assert.Contains(option, CommandLine.Usage);
        }
    }
}
