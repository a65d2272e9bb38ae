namespace Peregrine.Server.Configuration;

/// <summary>
/// Reads the command line into raw setting values. Values are parsed later, with those from
/// the environment and the config file, so that all bad values are reported together.
/// </summary>
internal sealed class CommandLine
{
    public bool ShowHelp { get; private set; }

    public bool ShowVersion { get; private set; }

    /// <summary>
    /// The option with an optional value (<c>--spa</c>) given bare just before ROOT, if it was:
    /// <c>--spa index.html</c> serves a folder named index.html, and when there is none the error
    /// says <c>--spa=index.html</c> was probably meant.
    /// </summary>
    public string? RootAfterOptionalFlag { get; private set; }

    /// <summary>
    /// True when a second folder was given: which one was meant to be served is in doubt, so the
    /// files that options name under ROOT are not looked for (RootFiles); the error says why.
    /// </summary>
    public bool SecondRoot { get; private set; }

    /// <summary>The <c>--config</c> file, if given.</summary>
    public SettingValue? ConfigFile { get; private set; }

    /// <summary>One value per option given, in the order first given; repeated options gathered into one.</summary>
    public List<SettingValue> Values { get; } = [];

    public static CommandLine Parse(string[] args, List<string> errors)
    {
        var result = new CommandLine();
        var gathered = new Dictionary<OptionSpec, List<string>>();
        var order = new List<OptionSpec>();
        var positionalOnly = false;
        string? previousOptionalFlag = null;

        void Add(OptionSpec option, IEnumerable<string> values, bool replace)
        {
            if (!gathered.TryGetValue(option, out var list))
            {
                gathered[option] = list = [];
                order.Add(option);
            }

            if (replace)
            {
                list.Clear();
            }

            list.AddRange(values);
        }

        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            var afterOptional = previousOptionalFlag;
            previousOptionalFlag = null;
            if (positionalOnly || arg.Length < 2 || arg[0] != '-')
            {
                if (gathered.ContainsKey(OptionTable.Root))
                {
                    var hint = afterOptional is null ? "" : $" (a value for {afterOptional} attaches with '=': {afterOptional}={arg})";
                    errors.Add($"ROOT (command line): '{arg}' is a second folder; only one ROOT can be served{hint}.");
                    result.SecondRoot = true;
                    continue;
                }

                Add(OptionTable.Root, [arg], replace: true);
                result.RootAfterOptionalFlag = afterOptional;
                continue;
            }

            if (arg == "--")
            {
                positionalOnly = true;
                continue;
            }

            string? inline = null;
            if (arg.StartsWith("--", StringComparison.Ordinal) && arg.IndexOf('=') is > 2 and var eq)
            {
                inline = arg[(eq + 1)..];
                arg = arg[..eq];
            }

            switch (arg)
            {
                case "-h" or "--help":
                    result.ShowHelp = true;
                    continue;
                case "-V" or "--version":
                    result.ShowVersion = true;
                    continue;
                case OptionTable.ConfigFlag:
                    if (TakeValue(args, ref i, inline, arg, errors) is { } config)
                    {
                        result.ConfigFile = new SettingValue(OptionTable.Config, [config], SettingSource.CommandLine);
                    }

                    continue;
            }

            var option = Find(arg);
            if (option is null)
            {
                errors.Add(Closest(arg) is { } meant
                    ? $"{arg} (command line): unknown option; did you mean {meant}? (see --help)"
                    : $"{arg} (command line): unknown option (see --help).");
                continue;
            }

            switch (option.Arity)
            {
                case Arity.Switch:
                    Add(option, [inline ?? "true"], replace: true);
                    break;
                case Arity.OptionalValue:
                    Add(option, inline is null ? [] : [inline], replace: true);
                    previousOptionalFlag = inline is null ? arg : null;
                    break;
                case Arity.Values:
                    if (inline is not null)
                    {
                        Add(option, inline.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries), replace: false);
                    }
                    else
                    {
                        // Take the following arguments while they look like origins, so that
                        // "--cors https://a.example site/" leaves site/ as ROOT.
                        var values = new List<string>();
                        while (i + 1 < args.Length && (args[i + 1] == "*" || args[i + 1].Contains("://", StringComparison.Ordinal)))
                        {
                            values.Add(args[++i]);
                        }

                        Add(option, values, replace: false);
                    }

                    break;
                case Arity.Repeated:
                    if (TakeValue(args, ref i, inline, arg, errors) is { } item)
                    {
                        Add(option, [item], replace: false);
                    }

                    break;
                default:
                    if (TakeValue(args, ref i, inline, arg, errors) is { } value)
                    {
                        Add(option, [value], replace: true);
                    }

                    break;
            }
        }

        foreach (var option in order)
        {
            result.Values.Add(new SettingValue(option, gathered[option], SettingSource.CommandLine));
        }

        return result;
    }

    private static OptionSpec? Find(string flag)
    {
        foreach (var option in OptionTable.All)
        {
            if (!option.IsPositional && (option.Flag == flag || option.ShortFlag == flag))
            {
                return option;
            }
        }

        return null;
    }

    /// <summary>The flag a mistyped one was most likely meant to be: at most two edits away (<c>--prot</c>, <c>--no-watched</c>), or none.</summary>
    private static string? Closest(string flag)
    {
        string? best = null;
        var bestDistance = 3;
        foreach (var known in OptionTable.All.Where(o => !o.IsPositional).Select(o => o.Flag).Append(OptionTable.ConfigFlag).Append("--help").Append("--version"))
        {
            var distance = EditDistance(flag, known);
            if (distance < bestDistance)
            {
                (best, bestDistance) = (known, distance);
            }
        }

        return best;
    }

    /// <summary>Levenshtein distance: insertions, deletions and substitutions.</summary>
    private static int EditDistance(string a, string b)
    {
        var previous = new int[b.Length + 1];
        var current = new int[b.Length + 1];
        for (var j = 0; j <= b.Length; j++)
        {
            previous[j] = j;
        }

        for (var i = 1; i <= a.Length; i++)
        {
            current[0] = i;
            for (var j = 1; j <= b.Length; j++)
            {
                current[j] = Math.Min(Math.Min(current[j - 1], previous[j]) + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1));
            }

            (previous, current) = (current, previous);
        }

        return previous[b.Length];
    }

    private static string? TakeValue(string[] args, ref int i, string? inline, string flag, List<string> errors)
    {
        if (inline is not null)
        {
            return inline;
        }

        if (i + 1 < args.Length)
        {
            return args[++i];
        }

        errors.Add($"{flag} (command line): a value is required.");
        return null;
    }
}
