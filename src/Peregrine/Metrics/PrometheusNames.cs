using System.Globalization;
using System.Text;

namespace Peregrine.Metrics;

/// <summary>
/// OpenTelemetry names to Prometheus names, as the OpenTelemetry specification's
/// "Prometheus and OpenMetrics compatibility" section maps them: characters outside
/// <c>[a-zA-Z0-9_:]</c> become <c>_</c>, the unit is appended in words (<c>By</c> → <c>_bytes</c>),
/// <c>{annotations}</c> are dropped, and monotonic counters end in <c>_total</c>.
/// </summary>
internal static class PrometheusNames
{
    public static string MetricName(string name, string? unit, bool monotonic)
    {
        var text = new StringBuilder(name.Length + 16);
        AppendSanitized(text, name, allowColon: true);
        var unitWords = UnitWords(unit);
        if (unitWords.Length != 0 && !EndsWith(text, "_" + unitWords))
        {
            text.Append('_').Append(unitWords);
        }

        if (monotonic && !EndsWith(text, "_total"))
        {
            text.Append("_total");
        }

        return text.ToString();
    }

    public static string LabelName(string key)
    {
        var text = new StringBuilder(key.Length);
        AppendSanitized(text, key, allowColon: false);
        return text.ToString();
    }

    /// <summary>Renders a tag set as <c>a="1",b="2"</c>, sorted by name so one set has one spelling.</summary>
    public static string Labels(ReadOnlySpan<KeyValuePair<string, object?>> tags)
    {
        var sorted = tags.ToArray();
        Array.Sort(sorted, static (a, b) => string.CompareOrdinal(a.Key, b.Key));
        var text = new StringBuilder();
        foreach (var (key, value) in sorted)
        {
            if (text.Length != 0)
            {
                text.Append(',');
            }

            text.Append(LabelName(key)).Append("=\"");
            AppendLabelValue(text, Convert.ToString(value, CultureInfo.InvariantCulture) ?? "");
            text.Append('"');
        }

        return text.ToString();
    }

    /// <summary>Exposition format 0.0.4: in HELP text, backslash and line feed are escaped.</summary>
    public static void AppendHelp(StringBuilder text, string help)
    {
        foreach (var c in help)
        {
            _ = c switch
            {
                '\\' => text.Append(@"\\"),
                '\n' => text.Append(@"\n"),
                _ => text.Append(c),
            };
        }
    }

    /// <summary>Exposition format 0.0.4: in label values, backslash, double quote and line feed are escaped.</summary>
    public static void AppendLabelValue(StringBuilder text, string value)
    {
        foreach (var c in value)
        {
            _ = c switch
            {
                '\\' => text.Append(@"\\"),
                '"' => text.Append("\\\""),
                '\n' => text.Append(@"\n"),
                _ => text.Append(c),
            };
        }
    }

    private static string UnitWords(string? unit) => unit switch
    {
        null or "" or "1" => "",
        "By" => "bytes",
        "s" => "seconds",
        "ms" => "milliseconds",
        // UCUM annotations ({request}, {file}) describe what is counted, not a unit.
        _ when unit.StartsWith('{') => "",
        _ => LabelName(unit.Replace("/", "_per_", StringComparison.Ordinal)),
    };

    private static void AppendSanitized(StringBuilder text, string name, bool allowColon)
    {
        foreach (var c in name)
        {
            var valid = char.IsAsciiLetterOrDigit(c) || c == '_' || (allowColon && c == ':');
            var next = valid ? c : '_';

            // Collapse runs, as "a..b" and "a._b" would otherwise become "a__b".
            if (next == '_' && text.Length != 0 && text[^1] == '_')
            {
                continue;
            }

            text.Append(next);
        }

        // A name may not start with a digit.
        if (text.Length != 0 && char.IsAsciiDigit(text[0]))
        {
            text.Insert(0, '_');
        }
    }

    private static bool EndsWith(StringBuilder text, string suffix)
    {
        if (text.Length < suffix.Length)
        {
            return false;
        }

        for (var i = 0; i < suffix.Length; i++)
        {
            if (text[text.Length - suffix.Length + i] != suffix[i])
            {
                return false;
            }
        }

        return true;
    }
}
