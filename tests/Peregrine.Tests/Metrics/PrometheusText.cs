using System.Globalization;
using System.Text.RegularExpressions;

namespace Peregrine.Tests.Metrics;

/// <summary>Reads the Prometheus text format (0.0.4) as a scraper would, for assertions.</summary>
internal static partial class PrometheusText
{
    /// <summary>The value of one sample, named as it appears in the text, or null when absent.</summary>
    public static long? Sample(string text, string series)
    {
        foreach (var line in text.Split('\n'))
        {
            if (line.Length > series.Length && line.StartsWith(series, StringComparison.Ordinal) && line[series.Length] == ' ')
            {
                return long.Parse(line.AsSpan(series.Length + 1), CultureInfo.InvariantCulture);
            }
        }

        return null;
    }

    /// <summary>
    /// Fails unless every line is a HELP, TYPE or sample line of the 0.0.4 grammar, the text
    /// ends with a line feed, and every sample follows the TYPE line of its metric.
    /// </summary>
    public static void AssertWellFormed(string text)
    {
        Assert.EndsWith("\n", text);
        string? typed = null;
        var histogram = false;
        foreach (var line in text[..^1].Split('\n'))
        {
            if (line.StartsWith("# HELP ", StringComparison.Ordinal))
            {
                Assert.Matches(HelpLine(), line);
                continue;
            }

            var type = TypeLine().Match(line);
            if (type.Success)
            {
                typed = type.Groups["name"].Value;
                histogram = type.Groups["type"].Value == "histogram";
                continue;
            }

            var sample = SampleLine().Match(line);
            Assert.True(sample.Success, $"Not a sample line: '{line}'");
            var name = sample.Groups["name"].Value;
            if (histogram)
            {
                // A histogram's samples are its name with _bucket, _sum or _count.
                Assert.Contains(name, new[] { typed + "_bucket", typed + "_sum", typed + "_count" });
            }
            else
            {
                Assert.Equal(typed, name);
            }
        }
    }

    [GeneratedRegex(@"^# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .*$")]
    private static partial Regex HelpLine();

    [GeneratedRegex(@"^# TYPE (?<name>[a-zA-Z_:][a-zA-Z0-9_:]*) (?<type>counter|gauge|histogram)$")]
    private static partial Regex TypeLine();

    [GeneratedRegex(@"^(?<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_][a-zA-Z0-9_]*=""(?:[^""\\\n]|\\.)*""(,[a-zA-Z_][a-zA-Z0-9_]*=""(?:[^""\\\n]|\\.)*"")*\})? -?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")]
    private static partial Regex SampleLine();
}
