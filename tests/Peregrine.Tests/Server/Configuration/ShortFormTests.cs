using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Configuration;

/// <summary>The short forms peers have (-p, -a, -q, -v, -h, -V), the options added beside them, and PORT.</summary>
public sealed class ShortFormTests
{
    private static readonly Dictionary<string, string> s_noEnvironment = [];

    [Theory]
    [InlineData(new[] { "-p", "3000" }, "port", "3000")]
    [InlineData(new[] { "-a", "0.0.0.0" }, "host", "0.0.0.0 0.0.0.0")]
    [InlineData(new[] { "-q" }, "quiet", "True")]
    public void ShortForm_SetsTheSameSettingAsTheLongFlag(string[] args, string key, string expected)
    {
        var loaded = SettingsLoader.Load(args, s_noEnvironment);

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Equal(expected, CommandLineTests.Render(settings, key));
        Assert.Equal(SourceKind.CommandLine, settings.Sources[key].Source.Kind);
    }

    [Theory]
    [InlineData("-v")]
    [InlineData("--verbose")]
    public void Verbose_IsOnWithEitherSpelling(string flag)
    {
        using var settings = SettingsLoader.Load([flag], s_noEnvironment).Settings!;

        Assert.True(settings.Verbose);
        Assert.False(settings.Quiet);
    }

    [Fact]
    public void QuietAndVerbose_AreAnErrorNamingVerbose()
    {
        var loaded = SettingsLoader.Load(["-q", "-v"], s_noEnvironment);

        Assert.Equal("--verbose (command line): give either --quiet or --verbose, not both.", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void ShortPortWithABadValue_IsNamedByItsLongFlag()
    {
        var loaded = SettingsLoader.Load(["-p", "http"], s_noEnvironment);

        Assert.Equal("--port (command line): 'http' is not a port number (0 to 65535).", Assert.Single(loaded.Errors));
    }

    [Theory]
    [InlineData("-V")]
    [InlineData("--version")]
    public void Version_HasAShortForm(string flag) => Assert.True(SettingsLoader.Load([flag], s_noEnvironment).ShowVersion);

    [Theory]
    [InlineData("-h")]
    [InlineData("--help")]
    public void Help_HasAShortForm(string flag) => Assert.True(SettingsLoader.Load([flag], s_noEnvironment).ShowHelp);

    [Fact]
    public void Help_ShowsEveryShortForm()
    {
        foreach (var synopsis in new[] { "-p, --port N", "-a, --host ADDR", "-q, --quiet", "-v, --verbose", "-V, --version", "-h, --help", "--index NAME", "--hidden", "--redirect-http PORT" })
        {
            Assert.Contains(synopsis, Usage.Text);
        }
    }

    [Fact]
    public void Index_IsRepeatableAndKeepsItsOrder()
    {
        using var settings = SettingsLoader.Load(["--index", "default.htm", "--index=home.html"], s_noEnvironment).Settings!;

        Assert.Equal(["default.htm", "home.html"], settings.Index);
    }

    [Fact]
    public void Index_WithAPath_IsAnErrorByTheLibrarysRule()
    {
        var loaded = SettingsLoader.Load(["--index", "docs/index.html"], s_noEnvironment);

        Assert.Equal("--index (command line): 'docs/index.html' must be a plain file name.", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void IndexAndHidden_ComeFromTheEnvironmentAndConfigToo()
    {
        using var tree = new TempTree();
        var config = tree.Write("peregrine.json", """{ "index": ["start.html", "index.html"], "hidden": true }""");

        using var fromFile = SettingsLoader.Load(["--config", config], s_noEnvironment).Settings!;
        using var fromEnvironment = SettingsLoader.Load([], new Dictionary<string, string> { ["PEREGRINE_INDEX"] = "a.html\nb.html", ["PEREGRINE_HIDDEN"] = "1" }).Settings!;

        Assert.Equal(["start.html", "index.html"], fromFile.Index);
        Assert.True(fromFile.Hidden);
        Assert.Equal(["a.html", "b.html"], fromEnvironment.Index);
        Assert.True(fromEnvironment.Hidden);
    }

    [Fact]
    public void PortVariable_SetsThePortWhenPeregrinePortIsNotSet()
    {
        using var settings = SettingsLoader.Load([], new Dictionary<string, string> { ["PORT"] = "5000" }).Settings!;

        Assert.Equal(5000, settings.Port);
        Assert.Equal("PORT (environment)", settings.Sources["port"].Describe());
    }

    [Fact]
    public void PortVariable_RanksBelowPeregrinePortAndTheCommandLine()
    {
        var environment = new Dictionary<string, string> { ["PORT"] = "5000", ["PEREGRINE_PORT"] = "6000" };

        using var fromVariable = SettingsLoader.Load([], environment).Settings!;
        using var fromFlag = SettingsLoader.Load(["-p", "7000"], environment).Settings!;

        Assert.Equal(6000, fromVariable.Port);
        Assert.Equal(7000, fromFlag.Port);
    }

    [Fact]
    public void PortVariable_RanksAboveTheConfigFile()
    {
        using var tree = new TempTree();
        var config = tree.Write("peregrine.json", """{ "port": 9000 }""");

        using var settings = SettingsLoader.Load(["--config", config], new Dictionary<string, string> { ["PORT"] = "5000" }).Settings!;

        Assert.Equal(5000, settings.Port);
    }

    [Fact]
    public void PortVariable_WithABadValue_IsNamedAsPort()
    {
        var loaded = SettingsLoader.Load([], new Dictionary<string, string> { ["PORT"] = "eighty" });

        Assert.Equal("PORT (environment): 'eighty' is not a port number (0 to 65535).", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void PortVariable_IsNotWarnedAboutAsAnUnknownSetting()
    {
        var loaded = SettingsLoader.Load([], new Dictionary<string, string> { ["PORT"] = "5000" });

        Assert.Empty(loaded.Warnings);
    }

    [Fact]
    public void RedirectHttp_WithoutTls_IsAnErrorNamingIt()
    {
        var loaded = SettingsLoader.Load(["--redirect-http", "8080"], s_noEnvironment);

        Assert.Equal(
            "--redirect-http (command line): redirects to HTTPS, so it needs --tls-cert and --tls-key, or --tls-pfx.",
            Assert.Single(loaded.Errors));
    }

    [Fact]
    public void RedirectHttp_WithABadPort_IsAnErrorNamingIt()
    {
        var loaded = SettingsLoader.Load([], new Dictionary<string, string> { ["PEREGRINE_REDIRECT_HTTP"] = "x" });

        Assert.Contains("PEREGRINE_REDIRECT_HTTP (environment): 'x' is not a port number (0 to 65535).", loaded.Errors);
    }
}
