using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Configuration;

public sealed class CommandLineTests
{
    private static readonly Dictionary<string, string> s_noEnvironment = [];

    /// <summary>One setting as text, so that a table can name what it expects.</summary>
    internal static string Render(ServerSettings settings, string key) => key switch
    {
        "root" => settings.Root,
        "port" => settings.Port.ToString(),
        "host" => $"{settings.Host} {settings.Address?.ToString() ?? "(both loopbacks)"}",
        "spa" => settings.Spa ?? "(off)",
        "listing" => settings.Listing.ToString(),
        "cors" => string.Join("|", settings.Cors),
        "header" => string.Join("|", settings.Headers.Select(h => $"{h.Key}={h.Value}")),
        "cache" => string.Join("|", settings.Cache.Select(r => $"{r.Glob}=>{r.CacheControl}")),
        "accessLog" => settings.AccessLog ?? "(off)",
        "metrics" => settings.Metrics.ToString(),
        "noWatch" => settings.NoWatch.ToString(),
        "noCompression" => settings.NoCompression.ToString(),
        "noFastPath" => settings.NoFastPath.ToString(),
        "noTlsSizing" => settings.NoTlsSizing.ToString(),
        "kestrelTls" => settings.KestrelTls.ToString(),
        "noInlineIo" => settings.NoInlineIo.ToString(),
        "compressionCache" => settings.CompressionCache ?? "(none)",
        "memoryBudget" => settings.MemoryBudget?.ToString() ?? "(default)",
        "copyLimit" => settings.CopyLimit?.ToString() ?? "(default)",
        "shutdownTimeout" => settings.ShutdownTimeout.TotalSeconds.ToString(System.Globalization.CultureInfo.InvariantCulture),
        "quiet" => settings.Quiet.ToString(),
        _ => throw new ArgumentOutOfRangeException(nameof(key)),
    };

    [Fact]
    public void NoArguments_ServesCurrentFolderOnLoopback8080WithDocumentedDefaults()
    {
        var loaded = SettingsLoader.Load([], s_noEnvironment);

        using var settings = loaded.Settings!;
        Assert.Empty(loaded.Errors);
        Assert.Equal(".", settings.Root);
        Assert.Equal(8080, settings.Port);
        Assert.Equal("127.0.0.1 127.0.0.1", Render(settings, "host"));
        Assert.Null(settings.Spa);
        Assert.False(settings.Listing);
        Assert.Empty(settings.Cors);
        Assert.Empty(settings.Headers);
        Assert.Empty(settings.Cache);
        Assert.Null(settings.AccessLog);
        Assert.False(settings.Metrics);
        Assert.Null(settings.MemoryBudget);
        Assert.Null(settings.Certificate);
        Assert.Equal(TimeSpan.FromSeconds(10), settings.ShutdownTimeout);
    }

    [Theory]
    [InlineData(new[] { "--port", "9000" }, "port", "9000")]
    [InlineData(new[] { "--port=0" }, "port", "0")]
    [InlineData(new[] { "--host", "0.0.0.0" }, "host", "0.0.0.0 0.0.0.0")]
    [InlineData(new[] { "--host", "::" }, "host", ":: ::")]
    [InlineData(new[] { "--host=[::1]" }, "host", "[::1] ::1")]
    [InlineData(new[] { "--host", "localhost" }, "host", "localhost (both loopbacks)")]
    [InlineData(new[] { "--spa" }, "spa", "index.html")]
    [InlineData(new[] { "--spa=app/shell.html" }, "spa", "app/shell.html")]
    [InlineData(new[] { "--listing" }, "listing", "True")]
    [InlineData(new[] { "--listing=false" }, "listing", "False")]
    [InlineData(new[] { "--cors" }, "cors", "*")]
    [InlineData(new[] { "--cors", "https://a.example", "http://b.example:8443" }, "cors", "https://a.example|http://b.example:8443")]
    [InlineData(new[] { "--cors=https://a.example,https://b.example" }, "cors", "https://a.example|https://b.example")]
    [InlineData(new[] { "--cors", "https://a.example", "--cors", "https://b.example" }, "cors", "https://a.example|https://b.example")]
    [InlineData(new[] { "--header", "X-Frame-Options: DENY", "--header=Content-Security-Policy: default-src 'self'; img-src *" }, "header", "X-Frame-Options=DENY|Content-Security-Policy=default-src 'self'; img-src *")]
    [InlineData(new[] { "--cache", "*.html=no-cache", "--cache", "assets/**=public, max-age=31536000, immutable" }, "cache", "*.html=>no-cache|assets/**=>public, max-age=31536000, immutable")]
    [InlineData(new[] { "--cache", "*.map=" }, "cache", "*.map=>")]
    [InlineData(new[] { "--access-log" }, "accessLog", "-")]
    [InlineData(new[] { "--access-log=-" }, "accessLog", "-")]
    [InlineData(new[] { "--metrics" }, "metrics", "True")]
    [InlineData(new[] { "--no-watch" }, "noWatch", "True")]
    [InlineData(new[] { "--no-compression" }, "noCompression", "True")]
    [InlineData(new[] { "--no-fast-path" }, "noFastPath", "True")]
    [InlineData(new[] { "--no-tls-sizing" }, "noTlsSizing", "True")]
    [InlineData(new[] { "--kestrel-tls" }, "kestrelTls", "True")]
    [InlineData(new[] { "--no-inline-io" }, "noInlineIo", "True")]
    [InlineData(new[] { "--compression-cache", "/var/cache/peregrine" }, "compressionCache", "/var/cache/peregrine")]
    [InlineData(new[] { "--memory-budget", "64M" }, "memoryBudget", "67108864")]
    [InlineData(new[] { "--memory-budget", "1G" }, "memoryBudget", "1073741824")]
    [InlineData(new[] { "--memory-budget", "2KiB" }, "memoryBudget", "2048")]
    [InlineData(new[] { "--memory-budget", "1000" }, "memoryBudget", "1000")]
    [InlineData(new[] { "--copy-limit", "16M" }, "copyLimit", "16777216")]
    [InlineData(new[] { "--copy-limit", "0" }, "copyLimit", "0")]
    [InlineData(new[] { "--shutdown-timeout", "2.5" }, "shutdownTimeout", "2.5")]
    [InlineData(new[] { "-q" }, "quiet", "True")]
    [InlineData(new[] { "--quiet" }, "quiet", "True")]
    public void Flag_SetsItsSetting(string[] args, string key, string expected)
    {
        // A root that holds the files the flags name: a missing one stops start-up (RootFiles).
        using var tree = new TempTree();
        tree.Write("index.html", "shell");
        tree.Write("app/shell.html", "shell");
        var loaded = SettingsLoader.Load([tree.Root, .. args], s_noEnvironment);

        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.Equal(expected, Render(settings, key));
        Assert.Equal(SourceKind.CommandLine, settings.Sources[key].Source.Kind);
    }

    [Fact]
    public void Root_IsPositionalAndMayFollowOriginsOrASwitch()
    {
        using var tree = new TempTree();

        using var settings = SettingsLoader.Load(["--cors", "https://a.example", tree.Root, "--listing"], s_noEnvironment).Settings!;

        Assert.Equal(tree.Root, settings.Root);
        Assert.Equal("https://a.example", Render(settings, "cors"));
    }

    [Fact]
    public void DoubleDash_EndsOptions()
    {
        var loaded = SettingsLoader.Load(["--", "--port"], s_noEnvironment);

        Assert.Equal("ROOT (command line): '--port' does not exist or is not a folder.", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void AccessLogFile_IsOpenedForAppending()
    {
        using var tree = new TempTree();
        var log = Path.Combine(tree.Root, "access.log");

        using (var settings = SettingsLoader.Load([$"--access-log={log}"], s_noEnvironment).Settings!)
        {
            Assert.Equal(log, settings.AccessLog);
            Assert.NotNull(settings.AccessLogStream);
        }

        Assert.True(File.Exists(log));
    }

    [Theory]
    [InlineData(new[] { "--port", "http" }, "--port (command line): 'http' is not a port number")]
    [InlineData(new[] { "--port", "70000" }, "--port (command line)")]
    [InlineData(new[] { "--port", "-1" }, "--port (command line)")]
    [InlineData(new[] { "--port" }, "--port (command line): a value is required")]
    [InlineData(new[] { "--host", "not an address" }, "--host (command line): 'not an address' is not an IP address")]
    [InlineData(new[] { "--frobnicate" }, "--frobnicate (command line): unknown option")]
    [InlineData(new[] { "/no/such/folder/anywhere" }, "ROOT (command line): '/no/such/folder/anywhere' does not exist")]
    [InlineData(new[] { ".", "." }, "only one ROOT")]
    [InlineData(new[] { ".", "--spa", "." }, "a value for --spa attaches with '=': --spa=.")]
    [InlineData(new[] { "--spa=../secret.html" }, "--spa (command line): '../secret.html' must be a file under the root")]
    [InlineData(new[] { "--listing=maybe" }, "--listing (command line): 'maybe' is not true or false")]
    [InlineData(new[] { "--cors=https://a.example/path" }, "--cors (command line): 'https://a.example/path' is not '*' or an origin")]
    [InlineData(new[] { "--header", "no colon" }, "--header (command line): 'no colon' is not 'Name: value'")]
    [InlineData(new[] { "--header", "Bad Name: x" }, "--header (command line)")]
    [InlineData(new[] { "--header", "X-Empty:" }, "--header (command line): 'X-Empty' needs a value")]
    [InlineData(new[] { "--header", "Content-Type: text/plain" }, "--header (command line): 'Content-Type' is set by Peregrine for each response and cannot be configured.")]
    [InlineData(new[] { "--header", "X-A: 1\u0001" }, "--header (command line): 'X-A' holds a character not allowed in a header value (U+0001)")]
    [InlineData(new[] { "--cors=https://a.example?x=1" }, "--cors (command line): 'https://a.example?x=1' is not '*' or an origin")]
    [InlineData(new[] { "--cache", "*.html=no-cache\u0001" }, "--cache (command line): '*.html=no-cache\u0001' holds a character not allowed in a header value (U+0001)")]
    [InlineData(new[] { "--header", "X-A: 1", "--header", "x-a: 2" }, "the header 'x-a' is given twice")]
    [InlineData(new[] { "--cache", "no-equals" }, "--cache (command line): 'no-equals' is not 'GLOB=VALUE'")]
    [InlineData(new[] { "--memory-budget", "lots" }, "--memory-budget (command line): 'lots' is not a size")]
    [InlineData(new[] { "--memory-budget", "99999999999T" }, "--memory-budget (command line)")]
    [InlineData(new[] { "--shutdown-timeout", "soon" }, "--shutdown-timeout (command line): 'soon' is not a number of seconds")]
    [InlineData(new[] { "--access-log=/no/such/folder/access.log" }, "--access-log (command line): cannot open '/no/such/folder/access.log'")]
    [InlineData(new[] { "--config", "/no/such/peregrine.json" }, "--config (command line): cannot read '/no/such/peregrine.json'")]
    public void BadArgument_FailsWithOneLineNamingItAndItsSource(string[] args, string expected)
    {
        var loaded = SettingsLoader.Load(args, s_noEnvironment);

        Assert.Null(loaded.Settings);
        var error = Assert.Single(loaded.Errors);
        Assert.Contains(expected, error);
        Assert.DoesNotContain("\n", error);
    }

    [Fact]
    public void CompressionCacheThatIsAFile_IsReportedUnderTheFlag()
    {
        using var tree = new TempTree();
        var file = tree.Write("not-a-folder", "x");

        var loaded = SettingsLoader.Load([tree.Root, "--compression-cache", file], s_noEnvironment);

        Assert.Equal($"--compression-cache (command line): '{file}' is a file, not a folder.", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void SeveralBadArguments_AreAllReportedAtOnce()
    {
        var loaded = SettingsLoader.Load(["--port", "x", "--host", "y", "--memory-budget", "z", "--bogus"], s_noEnvironment);

        Assert.Equal(4, loaded.Errors.Count);
        Assert.Contains(loaded.Errors, e => e.StartsWith("--port (command line)", StringComparison.Ordinal));
        Assert.Contains(loaded.Errors, e => e.StartsWith("--host (command line)", StringComparison.Ordinal));
        Assert.Contains(loaded.Errors, e => e.StartsWith("--memory-budget (command line)", StringComparison.Ordinal));
        Assert.Contains(loaded.Errors, e => e.StartsWith("--bogus (command line)", StringComparison.Ordinal));
    }

    [Fact]
    public void HelpOrVersion_WinsOverBadArguments()
    {
        Assert.True(SettingsLoader.Load(["--port", "x", "--help"], s_noEnvironment).ShowHelp);
        Assert.True(SettingsLoader.Load(["-h"], s_noEnvironment).ShowHelp);
        Assert.True(SettingsLoader.Load(["--version"], s_noEnvironment).ShowVersion);
    }

    [Fact]
    public void Help_ListsEveryOptionWithItsVariableAndKey()
    {
        foreach (var option in OptionTable.All)
        {
            Assert.Contains(option.IsPositional ? option.ValueName! : option.Flag, Usage.Text);
            Assert.Contains(option.EnvironmentVariable, Usage.Text);
            Assert.Contains($"\"{option.Key}\"", Usage.Text);
        }

        foreach (var flag in new[] { "--config", "PEREGRINE_CONFIG", "--version", "--help", "-q" })
        {
            Assert.Contains(flag, Usage.Text);
        }

        Assert.All(Usage.Text.Split('\n'), line => Assert.True(line.Length <= 90, line));
    }

    [Fact]
    public void Help_ListsEachOptionInExactlyOneGroup_UnderItsHeading()
    {
        var grouped = Usage.Groups.SelectMany(g => g.Options).ToList();
        Assert.Equal(grouped.Count, grouped.Distinct().Count());
        Assert.Equal(OptionTable.All.Append(OptionTable.Config).OrderBy(o => o.Key), grouped.OrderBy(o => o.Key));

        var lines = Usage.Text.Split('\n');
        foreach (var (title, options) in Usage.Groups)
        {
            var heading = Array.IndexOf(lines, title + ":");
            Assert.True(heading > 0, title);
            var next = Array.FindIndex(lines, heading + 1, line => line.Length > 0 && line[0] != ' ');
            var section = string.Join("\n", lines[heading..(next < 0 ? lines.Length : next)]);
            Assert.All(options, option => Assert.Contains("  " + option.Synopsis + " ", section));
        }
    }

    [Fact]
    public void Help_EndsWithExamples_EachARunnableCommandLine()
    {
        var examples = Usage.Text[Usage.Text.IndexOf("\nExamples:\n", StringComparison.Ordinal)..].Split('\n')
            .Where(line => line.StartsWith("  ", StringComparison.Ordinal) && !line.StartsWith("      ", StringComparison.Ordinal))
            .Select(line => line.Trim())
            .ToList();

        Assert.True(examples.Count >= 3);
        Assert.All(examples, example => Assert.Contains("peregrine", example));

        // Every flag an example uses is one the server knows.
        var flags = OptionTable.All.Where(o => !o.IsPositional).SelectMany(o => new[] { o.Flag, o.ShortFlag }).ToHashSet();
        foreach (var word in examples.SelectMany(e => e.Split(' ')).Where(w => w.StartsWith('-')))
        {
            Assert.Contains(word.Split('=')[0], flags);
        }
    }

    [Theory]
    [InlineData("--spa", "no-such-shell.html")]
    [InlineData("--access-log", "/no/such/folder/access.log")]
    public void OptionalValueGivenAsTheNextWord_IsTakenForRoot_AndTheErrorSuggestsTheEqualsForm(string flag, string word)
    {
        var loaded = SettingsLoader.Load([flag, word], s_noEnvironment);

        Assert.Equal(
            $"ROOT (command line): '{word}' does not exist or is not a folder. Did you mean {flag}={word}? ({flag} takes its value after '='; a separate word is ROOT.)",
            Assert.Single(loaded.Errors));
    }

    [Fact]
    public void MissingRoot_NotAfterAnOptionalFlag_SuggestsNothing()
    {
        var loaded = SettingsLoader.Load(["--listing", "/no/such/folder"], s_noEnvironment);

        Assert.Equal("ROOT (command line): '/no/such/folder' does not exist or is not a folder.", Assert.Single(loaded.Errors));
    }

    [Theory]
    [InlineData("--prot", "--port")]
    [InlineData("--no-watches", "--no-watch")]
    [InlineData("--clean-url", "--clean-urls")]
    [InlineData("--tls-certificate", null)]
    [InlineData("--frobnicate", null)]
    public void UnknownOption_SuggestsTheFlagItIsTwoEditsFrom(string given, string? meant)
    {
        var error = Assert.Single(SettingsLoader.Load([given], s_noEnvironment).Errors);

        Assert.Equal(
            meant is null ? $"{given} (command line): unknown option (see --help)." : $"{given} (command line): unknown option; did you mean {meant}? (see --help)",
            error);
    }

    [Theory]
    [InlineData("tlsCert", "--tls-cert", "PEREGRINE_TLS_CERT")]
    [InlineData("noWatch", "--no-watch", "PEREGRINE_NO_WATCH")]
    [InlineData("accessLog", "--access-log", "PEREGRINE_ACCESS_LOG")]
    [InlineData("port", "--port", "PEREGRINE_PORT")]
    public void OptionNames_AreDerivedFromOneKey(string key, string flag, string variable)
    {
        var option = OptionTable.ByKey(key)!;

        Assert.Equal(flag, option.Flag);
        Assert.Equal(variable, option.EnvironmentVariable);
    }
}
