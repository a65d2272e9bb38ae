using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Configuration;

/// <summary>Command line over environment over config file, and messages that say which one was wrong.</summary>
public sealed class PrecedenceTests : IDisposable
{
    private readonly TempTree _tree = new();

    public void Dispose() => _tree.Dispose();

    private string Config(string json) => _tree.Write("peregrine.json", json);

    private static LoadResult Load(string[] args, params (string Name, string Value)[] environment)
        => SettingsLoader.Load(args, environment.ToDictionary(e => e.Name, e => e.Value));

    [Fact]
    public void ConfigFile_SetsWhatNothingElseSets()
    {
        var file = Config("""{"port": 9001, "listing": true, "cors": ["https://a.example"], "memoryBudget": "64M"}""");

        using var settings = Load(["--config", file]).Settings!;

        Assert.Equal(9001, settings.Port);
        Assert.True(settings.Listing);
        Assert.Equal(["https://a.example"], settings.Cors);
        Assert.Equal(64L << 20, settings.MemoryBudget);
        Assert.Equal(SourceKind.ConfigFile, settings.Sources["port"].Source.Kind);
    }

    [Fact]
    public void Environment_BeatsConfigFile()
    {
        var file = Config("""{"port": 9001, "host": "0.0.0.0"}""");

        using var settings = Load(["--config", file], ("PEREGRINE_PORT", "9002")).Settings!;

        Assert.Equal(9002, settings.Port);
        Assert.Equal("0.0.0.0", settings.Host);
        Assert.Equal(SourceKind.Environment, settings.Sources["port"].Source.Kind);
    }

    [Fact]
    public void CommandLine_BeatsEnvironmentAndConfigFile()
    {
        var file = Config("""{"port": 9001}""");

        using var settings = Load(["--config", file, "--port", "9003"], ("PEREGRINE_PORT", "9002")).Settings!;

        Assert.Equal(9003, settings.Port);
        Assert.Equal(SourceKind.CommandLine, settings.Sources["port"].Source.Kind);
    }

    [Fact]
    public void List_FromAHigherSourceReplacesTheLowerOnesList()
    {
        var file = Config("""{"header": ["X-A: from file", "X-B: from file"]}""");

        using var settings = Load(["--config", file], ("PEREGRINE_HEADER", "X-C: from environment")).Settings!;

        Assert.Equal([new("X-C", "from environment")], settings.Headers);
    }

    [Fact]
    public void SwitchOnCommandLine_BeatsFalseInEnvironment()
    {
        using var settings = Load(["--listing"], ("PEREGRINE_LISTING", "false")).Settings!;

        Assert.True(settings.Listing);
    }

    [Fact]
    public void ConfigFile_CanBeNamedByTheEnvironmentAndTheCommandLineWins()
    {
        var fromEnvironment = _tree.Write("env.json", """{"port": 9004}""");
        var fromCommandLine = _tree.Write("cli.json", """{"port": 9005}""");

        using var byEnvironment = Load([], ("PEREGRINE_CONFIG", fromEnvironment)).Settings!;
        using var byBoth = Load(["--config", fromCommandLine], ("PEREGRINE_CONFIG", fromEnvironment)).Settings!;

        Assert.Equal(9004, byEnvironment.Port);
        Assert.Equal(9005, byBoth.Port);
    }

    [Fact]
    public void EveryKey_IsAccepted()
    {
        var site = Directory.CreateDirectory(Path.Combine(_tree.Root, "site")).FullName;
        // The files "spa" and "404" name are there: a missing one stops start-up (RootFiles).
        _tree.Write("site/index.html", "shell");
        _tree.Write("site/errors/404.html", "gone");
        var file = Config("""
            {
              // Comments and trailing commas are allowed.
              "root": "site",
              "port": 0,
              "host": "localhost",
              "spa": true,
              "404": "errors/404.html",
              "cleanUrls": true,
              "listing": true,
              "index": ["default.htm", "index.html"],
              "hidden": true,
              "cors": "*",
              "header": ["X-Frame-Options: DENY"],
              "cache": ["*.html=no-cache"],
              "accessLog": "logs-are-here.log",
              "metrics": true,
              "noWatch": true,
              "noCompression": false,
              "noDictionaries": false,
              "noFastPath": true,
              "noTlsSizing": true,
              "kestrelTls": true,
              "noInlineIo": true,
              "compressionCache": "cache",
              "memoryBudget": 1048576,
              "copyLimit": "16M",
              "tlsCert": null,
              "tlsKey": null,
              "tlsPfx": null,
              "tlsPassword": null,
              "redirectHttp": null,
              "basicAuth": ["alice:pw"],
              "basicAuthFile": null,
              "allowInsecureAuth": true,
              "shutdownTimeout": 3,
              // Only with an s3:// root; null is unset.
              "bucketPointer": null,
              "bucketPoll": null,
              "bucketNotify": null,
              "bucketCache": null,
              "bucketPathStyle": null,
              "quiet": true,
              "verbose": false,
            }
            """);

        var loaded = Load(["--config", file]);

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Equal(site, settings.Root);
        Assert.Null(settings.Address);
        Assert.Equal("index.html", settings.Spa);
        Assert.Equal(["*"], settings.Cors);
        Assert.Equal(Path.Combine(_tree.Root, "logs-are-here.log"), settings.AccessLog);
        Assert.Equal(Path.Combine(_tree.Root, "cache"), settings.CompressionCache);
        Assert.Equal(TimeSpan.FromSeconds(3), settings.ShutdownTimeout);
        Assert.Equal(16L << 20, settings.CopyLimit);
        Assert.True(settings.Quiet && settings.Metrics && settings.NoWatch && !settings.NoCompression && settings.NoFastPath && settings.NoTlsSizing && settings.KestrelTls && settings.NoInlineIo);
        Assert.Equal(["default.htm", "index.html"], settings.Index);
        Assert.True(settings.Hidden && !settings.Verbose);
        Assert.Equal("errors/404.html", settings.NotFoundPage);
        Assert.True(settings.CleanUrls && settings.AllowInsecureAuth);
        Assert.Equal(1, settings.Authenticator!.UserCount);
        var keys = OptionTable.All.Select(o => o.Key).ToHashSet();
        Assert.All(keys, key => Assert.Contains($"\"{key}\"", File.ReadAllText(file)));
    }

    [Fact]
    public void ConfigFile_RelativePathsAreTakenFromItsFolder()
    {
        var site = Directory.CreateDirectory(Path.Combine(_tree.Root, "www")).FullName;
        var file = Config("""{"root": "www", "tlsCert": "tls/cert.pem", "tlsKey": "/etc/key.pem"}""");

        var loaded = Load(["--config", file]);

        // The certificate does not exist; the message shows the resolved path.
        Assert.Contains(loaded.Errors, e => e.StartsWith($"tlsCert (config {file}): cannot read '{Path.Combine(_tree.Root, "tls", "cert.pem")}'", StringComparison.Ordinal));
        Assert.DoesNotContain(loaded.Errors, e => e.StartsWith("root", StringComparison.Ordinal));
    }

    [Fact]
    public void ConfigFile_FalseTurnsAnOptionalValueOff()
    {
        var file = Config("""{"spa": false, "accessLog": false}""");

        using var settings = Load(["--config", file]).Settings!;

        Assert.Null(settings.Spa);
        Assert.Null(settings.AccessLog);
    }

    [Fact]
    public void ConfigFile_UnknownKeyIsAnErrorNamingItAndTheFile()
    {
        var file = Config("""{"prot": 8080}""");

        var loaded = Load(["--config", file]);

        var error = Assert.Single(loaded.Errors);
        Assert.StartsWith($"prot (config {file}): unknown key; the keys are root, port,", error);
    }

    [Theory]
    [InlineData("""{"port": 8080,""", "not valid JSON")]
    [InlineData("""[8080]""", "must be a JSON object")]
    [InlineData("""{"port": 1, "port": 2}""", "port (config FILE): given more than once")]
    [InlineData("""{"port": [8080]}""", "port (config FILE): must be a string, number or true/false, not array")]
    [InlineData("""{"cors": [{"origin": "*"}]}""", "cors (config FILE): list items must be strings")]
    [InlineData("""{"header": {"X-A": "b"}}""", "header (config FILE): must be a string or a list of strings, not object")]
    [InlineData("""{"port": "eighty"}""", "port (config FILE): 'eighty' is not a port number")]
    public void ConfigFile_BadContentIsAnErrorNamingTheFile(string json, string expected)
    {
        var file = Config(json);

        var loaded = Load(["--config", file]);

        var error = Assert.Single(loaded.Errors);
        Assert.Contains(expected.Replace("FILE", file), error);
        Assert.Contains(file, error);
    }

    [Fact]
    public void BadValuesInEverySource_AreAllReportedEachWithItsSource()
    {
        var file = Config("""{"port": "a", "memoryBudget": "b"}""");

        var loaded = Load(["--config", file, "--port", "c"], ("PEREGRINE_PORT", "d"), ("PEREGRINE_SHUTDOWN_TIMEOUT", "e"));

        Assert.Null(loaded.Settings);
        Assert.Equal(
            [
                $"port (config {file}): 'a' is not a port number (0 to 65535).",
                $"memoryBudget (config {file}): 'b' is not a size (bytes, or a number with K, M, G or T, as in 64M).",
                "PEREGRINE_PORT (environment): 'd' is not a port number (0 to 65535).",
                "PEREGRINE_SHUTDOWN_TIMEOUT (environment): 'e' is not a number of seconds (0 to 3600).",
                "--port (command line): 'c' is not a port number (0 to 65535).",
            ],
            loaded.Errors);
    }

    [Theory]
    [InlineData("PEREGRINE_PORT", "9000", "port", "9000")]
    [InlineData("PEREGRINE_HOST", "::", "host", ":: ::")]
    [InlineData("PEREGRINE_SPA", "shell.html", "spa", "shell.html")]
    [InlineData("PEREGRINE_LISTING", "yes", "listing", "True")]
    [InlineData("PEREGRINE_LISTING", "0", "listing", "False")]
    [InlineData("PEREGRINE_CORS", "https://a.example, https://b.example", "cors", "https://a.example|https://b.example")]
    [InlineData("PEREGRINE_CORS", "*", "cors", "*")]
    [InlineData("PEREGRINE_HEADER", "X-A: 1, 2; 3\nX-B: b\n", "header", "X-A=1, 2; 3|X-B=b")]
    [InlineData("PEREGRINE_CACHE", "*.html=no-cache\r\nassets/**=public, max-age=60", "cache", "*.html=>no-cache|assets/**=>public, max-age=60")]
    [InlineData("PEREGRINE_ACCESS_LOG", "-", "accessLog", "-")]
    [InlineData("PEREGRINE_METRICS", "true", "metrics", "True")]
    [InlineData("PEREGRINE_NO_WATCH", "on", "noWatch", "True")]
    [InlineData("PEREGRINE_NO_COMPRESSION", "1", "noCompression", "True")]
    [InlineData("PEREGRINE_NO_FAST_PATH", "1", "noFastPath", "True")]
    [InlineData("PEREGRINE_NO_INLINE_IO", "1", "noInlineIo", "True")]
    [InlineData("PEREGRINE_COMPRESSION_CACHE", "/var/cache/peregrine", "compressionCache", "/var/cache/peregrine")]
    [InlineData("PEREGRINE_MEMORY_BUDGET", "512K", "memoryBudget", "524288")]
    [InlineData("PEREGRINE_SHUTDOWN_TIMEOUT", "0", "shutdownTimeout", "0")]
    [InlineData("PEREGRINE_QUIET", "true", "quiet", "True")]
    [InlineData("PEREGRINE_PORT", "", "port", "8080")]
    public void EnvironmentVariable_SetsItsSetting(string name, string value, string key, string expected)
    {
        // A root that holds the file PEREGRINE_SPA names: a missing one stops start-up (RootFiles).
        _tree.Write("shell.html", "shell");
        var loaded = Load([_tree.Root], (name, value));

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Equal(expected, CommandLineTests.Render(settings, key));
    }

    [Fact]
    public void EnvironmentRoot_IsUsedWhenNoneIsGiven()
    {
        using var settings = Load([], ("PEREGRINE_ROOT", _tree.Root)).Settings!;

        Assert.Equal(_tree.Root, settings.Root);
    }

    [Fact]
    public void UnknownEnvironmentVariable_IsAWarningNotAnError()
    {
        var loaded = Load([], ("PEREGRINE_PROT", "80"), ("PEREGRINE_SERVICE_HOST", "10.0.0.1"), ("PEREGRINE_PORT_8080_TCP", "tcp://10.0.0.1:8080"));

        Assert.Empty(loaded.Errors);
        loaded.Settings!.Dispose();
        Assert.Equal("PEREGRINE_PROT (environment): not a Peregrine setting; ignored.", Assert.Single(loaded.Warnings));
    }

    [Fact]
    public void KubernetesServiceLinkInPort_IsExplained()
    {
        var loaded = Load([], ("PEREGRINE_PORT", "tcp://10.96.0.12:8080"));

        var error = Assert.Single(loaded.Errors);
        Assert.StartsWith("PEREGRINE_PORT (environment): 'tcp://10.96.0.12:8080' is not a port number", error);
        Assert.Contains("enableServiceLinks", error);
    }
}
