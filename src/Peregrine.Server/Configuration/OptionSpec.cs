using System.Text;

namespace Peregrine.Server.Configuration;

/// <summary>How an option takes its value on the command line.</summary>
internal enum Arity
{
    /// <summary>On when present (<c>--listing</c>); <c>--listing=false</c> turns it off.</summary>
    Switch,

    /// <summary>One value, as the next argument or after <c>=</c> (<c>--port 80</c>, <c>--port=80</c>).</summary>
    Value,

    /// <summary>
    /// A value only after <c>=</c> (<c>--spa=app.html</c>); bare, the option takes its default.
    /// A separate argument would be ambiguous with ROOT (<c>--spa dist</c>), so it is never taken.
    /// </summary>
    OptionalValue,

    /// <summary>
    /// Several values: the arguments that follow and look like values, or a comma-separated
    /// list after <c>=</c> (<c>--cors https://a.example https://b.example</c>).
    /// </summary>
    Values,

    /// <summary>One value per occurrence; the option may be given many times (<c>--header</c>).</summary>
    Repeated,
}

/// <summary>
/// One setting of the standalone server and its three spellings. The names are derived from
/// <see cref="Key"/> so that they cannot drift apart: key <c>tlsCert</c> is the flag
/// <c>--tls-cert</c>, the variable <c>PEREGRINE_TLS_CERT</c> and the config key <c>tlsCert</c>.
/// </summary>
internal sealed class OptionSpec
{
    public OptionSpec(string key, Arity arity, string? valueName, string help, Action<ServerSettings, SettingValue, List<string>> apply)
    {
        Key = key;
        Arity = arity;
        ValueName = valueName;
        Help = help;
        Apply = apply;
        Flag = "--" + Separate(key, '-', upper: false);
        EnvironmentVariable = "PEREGRINE_" + Separate(key, '_', upper: true);
    }

    /// <summary>The config file key, camelCase.</summary>
    public string Key { get; }

    public Arity Arity { get; }

    /// <summary>What the value is called in the help (<c>N</c>, <c>FILE</c>); null for switches.</summary>
    public string? ValueName { get; }

    public string Help { get; }

    /// <summary>Parses the value into the settings, adding one message per bad value to the list.</summary>
    public Action<ServerSettings, SettingValue, List<string>> Apply { get; }

    /// <summary>The long flag, <c>--tls-cert</c>. ROOT is positional and has none in practice.</summary>
    public string Flag { get; }

    public string EnvironmentVariable { get; }

    /// <summary>A one-letter alias (<c>-q</c>), if any.</summary>
    public string? ShortFlag { get; init; }

    /// <summary>Positional on the command line (ROOT) rather than a flag.</summary>
    public bool IsPositional { get; init; }

    /// <summary>A file or folder: a relative path in a config file is taken from the file's folder.</summary>
    public bool IsPath { get; init; }

    /// <summary>How the environment variable separates list items, for <see cref="Arity.Values"/> and <see cref="Arity.Repeated"/>.</summary>
    public string? EnvironmentListHelp { get; init; }

    /// <summary>The command-line spelling of the flag with its value, for the help: <c>--port N</c>, <c>--spa[=FILE]</c>.</summary>
    public string Synopsis => IsPositional
        ? ValueName!
        : (ShortFlag is null ? "" : ShortFlag + ", ") + Arity switch
        {
            Arity.Switch => Flag,
            Arity.OptionalValue => $"{Flag}[={ValueName}]",
            Arity.Values => $"{Flag} [{ValueName}...]",
            _ => $"{Flag} {ValueName}",
        };

    public string NameIn(SourceKind source) => source switch
    {
        SourceKind.CommandLine => IsPositional ? ValueName! : Flag,
        SourceKind.Environment => EnvironmentVariable,
        _ => Key,
    };

    private static string Separate(string camel, char separator, bool upper)
    {
        var text = new StringBuilder(camel.Length + 4);
        foreach (var c in camel)
        {
            if (char.IsAsciiLetterUpper(c))
            {
                text.Append(separator);
            }

            text.Append(upper ? char.ToUpperInvariant(c) : char.ToLowerInvariant(c));
        }

        return text.ToString();
    }
}
