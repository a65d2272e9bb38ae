using System.Text;

namespace Peregrine.Server.Configuration;

/// <summary>The --help text, made from <see cref="OptionTable"/> so that it lists every option and its variable.</summary>
internal static class Usage
{
    private const int Column = 30;

    private const int Width = 90;

    /// <summary>
    /// The options by what they are for, in the order the help prints them. Every option of
    /// <see cref="OptionTable.All"/> is in exactly one group (a test holds it to that).
    /// </summary>
    internal static readonly (string Title, OptionSpec[] Options)[] Groups =
    [
        ("Serving", [OptionTable.Root, OptionTable.Port, OptionTable.Host, OptionTable.Spa, OptionTable.NotFound, OptionTable.CleanUrls,
            OptionTable.Listing, OptionTable.Index, OptionTable.Hidden]),
        ("HTTPS", [OptionTable.TlsCert, OptionTable.TlsKey, OptionTable.TlsPfx, OptionTable.TlsPassword, OptionTable.RedirectHttp]),
        ("Access", [OptionTable.BasicAuth, OptionTable.BasicAuthFile, OptionTable.AllowInsecureAuth, OptionTable.Cors]),
        ("Caching and headers", [OptionTable.Cache, OptionTable.Header]),
        ("Logging and metrics", [OptionTable.AccessLog, OptionTable.Metrics, OptionTable.Quiet, OptionTable.Verbose]),
        ("Advanced", [OptionTable.NoWatch, OptionTable.NoCompression, OptionTable.NoDictionaries, OptionTable.CompressionCache, OptionTable.MemoryBudget,
            OptionTable.CopyLimit, OptionTable.ShutdownTimeout, OptionTable.NoFastPath, OptionTable.NoTlsSizing, OptionTable.KestrelTls,
            OptionTable.NoInlineIo]),
        ("Bucket (s3:// ROOT)", [OptionTable.BucketPointer, OptionTable.BucketPoll, OptionTable.BucketNotify, OptionTable.BucketCache, OptionTable.BucketPathStyle]),
        ("Configuration", [OptionTable.Config]),
    ];

    // Each a command, then what it does; every line within the width.
    private static readonly (string Command, string Meaning)[] s_examples =
    [
        ("peregrine", "the current folder at http://127.0.0.1:8080/"),
        ("peregrine dist -p 3000 --spa", "a single-page app: routes without a file get dist/index.html"),
        ("peregrine site -a 0.0.0.0 --cache 'assets/**=public, max-age=31536000, immutable'", "on every address, with a year's caching for assets/"),
        ("peregrine /srv/www -a :: -p 443 --tls-cert cert.pem --tls-key key.pem --redirect-http 80", "HTTPS on 443, and http:// on 80 redirected to it"),
        ("PEREGRINE_BASIC_AUTH='ann:secret' peregrine staging --tls-pfx site.pfx", "a password-protected copy (the variable keeps the password out of ps)"),
    ];

    // After the tables it reads: static fields initialise in the order they are written.
    public static string Text { get; } = Build();

    private static string Build()
    {
        var text = new StringBuilder();
        text.AppendLine("Usage: peregrine [ROOT] [options]");
        text.AppendLine();
        text.AppendLine("Serves the files under ROOT over HTTP/1.1 and HTTP/2 (cleartext by prior knowledge,");
        text.AppendLine("or HTTPS with ALPN). Health is at /healthz. Each option can also be set by the");
        text.AppendLine("environment variable shown, or by the key shown in a --config file.");
        foreach (var (title, options) in Groups)
        {
            text.AppendLine();
            text.Append(title).AppendLine(":");
            foreach (var option in options)
            {
                Line(text, option.Synopsis, option.Help);
                var key = option == OptionTable.Config ? "" : $"; config key \"{option.Key}\"";
                var list = option.EnvironmentListHelp is null ? "" : $" ({option.EnvironmentListHelp})";
                Line(text, "", $"[{option.EnvironmentVariable}{list}{key}]");
            }
        }

        Line(text, "-V, --version", "Print the version and exit.");
        Line(text, "-h, --help", "Print this help and exit.");
        text.AppendLine();
        text.AppendLine("Precedence: command line, then PEREGRINE_* variables, then the config file; a list");
        text.AppendLine("given in one place replaces the list from the others. Optional values attach with");
        text.AppendLine("'=' (--spa=app.html, --access-log=/var/log/peregrine.log), since a separate word");
        text.AppendLine("would be taken for ROOT. A bad value stops start-up with status 2.");
        text.AppendLine();
        text.AppendLine("Examples:");
        foreach (var (command, meaning) in s_examples)
        {
            text.Append("  ").AppendLine(command);
            text.Append("      ").AppendLine(meaning);
        }

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
