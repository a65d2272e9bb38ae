using Peregrine.Server.AccessLog;
using Peregrine.Server.Auth;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;
using Peregrine.Validation;

// Configuration: before the flow starts. The standalone server reads its settings from the
// command line, the environment and a config file (OptionTable lists every option once, with its
// three spellings), checks each value with the library's own rules (PeregrineOptionsValidator)
// under the flag's name and source, and hands the library its options (ServerSettings.ApplyTo),
// from which the catalog is built and every request then runs catalog -> negotiation ->
// conditional -> ranges -> send.

namespace Peregrine.Server.Configuration;

/// <summary>The outcome of reading every source.</summary>
/// <param name="Settings">The settings; null when there were errors, or for --help and --version.</param>
/// <param name="Errors">Every bad value, each naming its option and source.</param>
/// <param name="Warnings">Things ignored, such as an unknown <c>PEREGRINE_*</c> variable.</param>
internal sealed record LoadResult(ServerSettings? Settings, IReadOnlyList<string> Errors, IReadOnlyList<string> Warnings, bool ShowHelp, bool ShowVersion);

/// <summary>
/// Reads the settings from the command line, the environment and the config file. For each
/// option the first of those three that sets it wins; a list set in one place replaces, not
/// extends, the list from a lower one. Every value from every source is parsed, so a bad value
/// is reported even where a higher source overrides it, and all errors come out together.
/// </summary>
internal static class SettingsLoader
{
    public static LoadResult Load(string[] args, IReadOnlyDictionary<string, string> environment)
    {
        var errors = new List<string>();
        var warnings = new List<string>();
        var commandLine = CommandLine.Parse(args, errors);
        if (commandLine.ShowHelp || commandLine.ShowVersion)
        {
            return new LoadResult(null, [], [], commandLine.ShowHelp, commandLine.ShowVersion);
        }

        var fromEnvironment = EnvironmentSource.Read(environment, warnings, out var configFromEnvironment);
        var configFile = commandLine.ConfigFile ?? configFromEnvironment;
        var fromFile = configFile is null ? [] : ConfigFile.Read(configFile, errors);

        var settings = new ServerSettings();
        foreach (var value in fromFile.Concat(fromEnvironment).Concat(commandLine.Values))
        {
            value.Option.Apply(settings, value, errors);
            settings.Sources[value.Option.Key] = value;
        }

        // The library's rules for what exists on disk, on the values in force only: a folder
        // named in a source that another overrides is neither looked for nor created.
        if (settings.ServesBucket)
        {
            BucketSettings.Check(settings, environment, errors);
        }
        else if (BucketSettings.FirstGiven(settings) is { } bucketOption)
        {
            errors.Add($"{settings.Describe(bucketOption)}: applies only when ROOT is a bucket (s3://BUCKET/PREFIX); ROOT is {settings.Describe(OptionTable.Root)}.");
        }
        else if (PeregrineOptionsValidator.RootProblem(settings.Root) is { } rootProblem)
        {
            // "--spa index.html": the word after a bare optional-value flag was taken for ROOT
            // (from the command line, which no other source overrides).
            var meant = commandLine.RootAfterOptionalFlag is { } flag
                ? $" Did you mean {flag}={settings.Root}? ({flag} takes its value after '='; a separate word is ROOT.)"
                : "";
            errors.Add($"{settings.Describe(OptionTable.Root)}: {rootProblem}{meant}");
        }
        else if (!commandLine.SecondRoot)
        {
            RootFiles.Check(settings, errors);
        }

        if (settings.Quiet && settings.Verbose)
        {
            errors.Add($"{settings.Describe(OptionTable.Verbose)}: give either {OptionTable.Quiet.Flag} or {OptionTable.Verbose.Flag}, not both.");
        }

        if (CertificateLoader.CheckCombination(settings, errors))
        {
            settings.Certificate = CertificateLoader.Load(settings, errors);
        }

        if (settings.RedirectHttp is { } redirect)
        {
            if (!CertificateLoader.IsConfigured(settings))
            {
                errors.Add($"{settings.Describe(OptionTable.RedirectHttp)}: redirects to HTTPS, so it needs {OptionTable.TlsCert.Flag} and {OptionTable.TlsKey.Flag}, or {OptionTable.TlsPfx.Flag}.");
            }
            else if (redirect == settings.Port && redirect != 0)
            {
                errors.Add($"{settings.Describe(OptionTable.RedirectHttp)}: {redirect} is the HTTPS port ({settings.Describe(OptionTable.Port)}); give another.");
            }
        }

        settings.Authenticator = BasicAuthSetup.Load(settings, errors);

        // Created last, and only when all else is well: a start-up that fails anyway should not
        // leave a cache folder or a log file behind.
        if (settings.CompressionCache is { } cache && errors.Count == 0
            && Compression.CompressionOptionsValidator.CacheDirectoryProblem(cache) is { } cacheProblem)
        {
            errors.Add($"{settings.Describe(OptionTable.CompressionCache)}: {cacheProblem}");
        }

        if (settings.AccessLog is not null && errors.Count == 0)
        {
            settings.AccessLogStream = AccessLogWriter.Open(settings.AccessLog!, settings.Describe(OptionTable.AccessLog), errors);
        }

        if (errors.Count > 0)
        {
            settings.Dispose();
            return new LoadResult(null, errors, warnings, false, false);
        }

        return new LoadResult(settings, errors, warnings, false, false);
    }
}
