using System.Collections;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Reads <c>PEREGRINE_*</c> environment variables into raw setting values. An empty variable
/// counts as unset. Lists: <c>PEREGRINE_CORS</c> is comma- or space-separated (an origin holds
/// neither); <c>PEREGRINE_HEADER</c> and <c>PEREGRINE_CACHE</c> take one item per line, since
/// header and Cache-Control values hold commas and semicolons. <c>PORT</c>, which container
/// platforms (Cloud Run, Heroku, Fly.io, Render) set to the port they route to, is the port when
/// <c>PEREGRINE_PORT</c> is not set.
/// </summary>
internal static class EnvironmentSource
{
    private static readonly char[] s_listSeparators = [',', ' ', '\t', '\n', '\r'];

    /// <summary>The platform's port variable, below <c>PEREGRINE_PORT</c>.</summary>
    public const string PlatformPort = "PORT";

    public static Dictionary<string, string> FromProcess()
    {
        var variables = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (DictionaryEntry entry in Environment.GetEnvironmentVariables())
        {
            // The AWS SDK's endpoint variables too, for the check of an s3:// ROOT (BucketSettings).
            if (entry.Key is string name && (name.StartsWith("PEREGRINE_", StringComparison.Ordinal) || name == PlatformPort || name.StartsWith("AWS_ENDPOINT_URL", StringComparison.Ordinal)) && entry.Value is string value)
            {
                variables[name] = value;
            }
        }

        return variables;
    }

    public static List<SettingValue> Read(IReadOnlyDictionary<string, string> environment, List<string> warnings, out SettingValue? configFile)
    {
        var values = new List<SettingValue>();
        configFile = null;
        foreach (var option in OptionTable.All)
        {
            if (!environment.TryGetValue(option.EnvironmentVariable, out var text) || text.Length == 0)
            {
                continue;
            }

            string[] items = option.Arity switch
            {
                Arity.Values => text.Split(s_listSeparators, StringSplitOptions.RemoveEmptyEntries),
                Arity.Repeated => text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries),
                _ => [text],
            };
            values.Add(new SettingValue(option, items, SettingSource.Environment));
        }

        if (!values.Any(v => v.Option == OptionTable.Port)
            && environment.TryGetValue(PlatformPort, out var platformPort) && platformPort.Length > 0)
        {
            values.Add(new SettingValue(OptionTable.Port, [platformPort], SettingSource.Environment) { Alias = PlatformPort });
        }

        if (environment.TryGetValue(OptionTable.Config.EnvironmentVariable, out var config) && config.Length > 0)
        {
            configFile = new SettingValue(OptionTable.Config, [config], SettingSource.Environment);
        }

        foreach (var name in environment.Keys.Order(StringComparer.Ordinal))
        {
            // PEREGRINE_PORTABLE is no setting but the library's own switch (docs/library.md, "Platforms").
            if (name.StartsWith("PEREGRINE_", StringComparison.Ordinal) && name != OptionTable.Config.EnvironmentVariable
                && name != global::Peregrine.Interop.PlatformParts.PortableVariable
                && !OptionTable.All.Any(o => o.EnvironmentVariable == name) && !IsKubernetesServiceLink(name))
            {
                warnings.Add($"{name} (environment): not a Peregrine setting; ignored.");
            }
        }

        return values;
    }

    // Kubernetes adds <SERVICE>_SERVICE_HOST, <SERVICE>_SERVICE_PORT* and <SERVICE>_PORT_<n>_<proto>*
    // for every Service in the namespace; a Service named "peregrine" would otherwise draw warnings.
    private static bool IsKubernetesServiceLink(string name)
        => name.StartsWith("PEREGRINE_SERVICE_", StringComparison.Ordinal) || name.StartsWith("PEREGRINE_PORT_", StringComparison.Ordinal);
}
