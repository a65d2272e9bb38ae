namespace Peregrine.Server.Configuration;

/// <summary>The places a setting can come from, lowest precedence first.</summary>
internal enum SourceKind
{
    Default,
    ConfigFile,
    Environment,
    CommandLine,
}

/// <summary>Where a setting came from, so that a message about it can say so.</summary>
internal sealed record SettingSource(SourceKind Kind, string? File = null)
{
    public static readonly SettingSource Default = new(SourceKind.Default);

    public static readonly SettingSource CommandLine = new(SourceKind.CommandLine);

    public static readonly SettingSource Environment = new(SourceKind.Environment);

    public static SettingSource ConfigFile(string path) => new(SourceKind.ConfigFile, path);

    public override string ToString() => Kind switch
    {
        SourceKind.CommandLine => "command line",
        SourceKind.Environment => "environment",
        SourceKind.ConfigFile => $"config {File}",
        _ => "default",
    };
}

/// <summary>
/// One option's raw value(s) from one source, before parsing. Values holds one string for a
/// single-valued option, any number for a list; it is empty for a bare <c>--spa</c>,
/// <c>--access-log</c> or <c>--cors</c>, which then take their documented default.
/// </summary>
internal sealed record SettingValue(OptionSpec Option, IReadOnlyList<string> Values, SettingSource Source, bool Disabled = false)
{
    /// <summary>A name the source uses other than the option's own: <c>PORT</c>, for the port.</summary>
    public string? Alias { get; init; }

    /// <summary>The option's name as the source spells it: <c>--port</c>, <c>PEREGRINE_PORT</c> or <c>port</c>.</summary>
    public string Name => Alias ?? Option.NameIn(Source.Kind);

    /// <summary>For messages: <c>--port (command line)</c>, <c>port (config /etc/peregrine.json)</c>.</summary>
    public string Describe() => $"{Name} ({Source})";

    /// <summary>The single value of a single-valued option (the last one given).</summary>
    public string Single => Values.Count == 0 ? "" : Values[^1];
}
