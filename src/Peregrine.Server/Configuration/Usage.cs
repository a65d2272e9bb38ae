using System.Text;

namespace Peregrine.Server.Configuration;

/// <summary>The --help text, made from <see cref="OptionTable"/> so that it lists every option and its variable.</summary>
internal static class Usage
{
    private const int Column = 30;

    private const int Width = 90;

    public static string Text { get; } = Build();

    private static string Build()
    {
        var text = new StringBuilder();
        text.AppendLine("Usage: peregrine [ROOT] [options]");
        text.AppendLine();
        text.AppendLine("Serves the files under ROOT over HTTP/1.1 and HTTP/2 (cleartext by prior knowledge,");
        text.AppendLine("or HTTPS with ALPN). Health is at /healthz. Each option can also be set by the");
        text.AppendLine("environment variable shown, or by the key shown in a --config file.");
        text.AppendLine();
        text.AppendLine("Options:");
        foreach (var option in OptionTable.All.Append(OptionTable.Config))
        {
            Line(text, option.Synopsis, option.Help);
            var key = option == OptionTable.Config ? "" : $"; config key \"{option.Key}\"";
            var list = option.EnvironmentListHelp is null ? "" : $" ({option.EnvironmentListHelp})";
            Line(text, "", $"[{option.EnvironmentVariable}{list}{key}]");
        }

        Line(text, "-V, --version", "Print the version and exit.");
        Line(text, "-h, --help", "Print this help and exit.");
        text.AppendLine();
        text.AppendLine("Precedence: command line, then PEREGRINE_* variables, then the config file; a list");
        text.AppendLine("given in one place replaces the list from the others. Optional values attach with");
        text.AppendLine("'=' (--spa=app.html, --access-log=/var/log/peregrine.log), since a separate word");
        text.AppendLine("would be taken for ROOT. A bad value stops start-up with status 2.");
        return text.ToString().TrimEnd();
    }

    private static void Line(StringBuilder text, string left, string right)
    {
        text.Append("  ").Append(left);
        if (left.Length + 2 >= Column)
        {
            text.AppendLine();
            text.Append(' ', Column);
        }
        else
        {
            text.Append(' ', Column - 2 - left.Length);
        }

        // Wrapped at word boundaries to fit the width.
        var used = 0;
        foreach (var word in right.Split(' '))
        {
            if (used > 0 && used + 1 + word.Length > Width - Column)
            {
                text.AppendLine().Append(' ', Column);
                used = 0;
            }
            else if (used > 0)
            {
                text.Append(' ');
                used++;
            }

            text.Append(word);
            used += word.Length;
        }

        text.AppendLine();
    }
}
