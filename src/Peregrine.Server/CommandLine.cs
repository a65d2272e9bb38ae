using System.Globalization;
using System.Net;

namespace Peregrine.Server;

/// <summary>The parsed command line. Flag names are a stable interface: scripts drive them.</summary>
internal sealed class CommandLine
{
    public const string Usage = """
        Usage: peregrine [ROOT] [options]

        Serves the files under ROOT (default: the current directory) over HTTP/1.1 and HTTP/2.

        Options:
          --port N         Port to listen on (default 8080; 0 picks a free port).
          --host ADDR      Address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all).
          -q, --quiet      Print only errors.
          --version        Print the version and exit.
          -h, --help       Print this help and exit.
        """;

    public string Root { get; private set; } = ".";

    public int Port { get; private set; } = 8080;

    public string Host { get; private set; } = "127.0.0.1";

    public IPAddress? Address { get; private set; } = IPAddress.Loopback;

    public bool Quiet { get; private set; }

    public bool ShowHelp { get; private set; }

    public bool ShowVersion { get; private set; }

    /// <summary>Parses the arguments; on failure <paramref name="error"/> is one line naming the culprit.</summary>
    public static CommandLine? TryParse(string[] args, out string? error)
    {
        var result = new CommandLine();
        var rootSeen = false;
        for (var i = 0; i < args.Length; i++)
        {
            var arg = args[i];
            string? inlineValue = null;
            if (arg.StartsWith("--", StringComparison.Ordinal) && arg.IndexOf('=') is > 2 and var eq)
            {
                inlineValue = arg[(eq + 1)..];
                arg = arg[..eq];
            }

            switch (arg)
            {
                case "-h" or "--help":
                    result.ShowHelp = true;
                    break;
                case "--version":
                    result.ShowVersion = true;
                    break;
                case "-q" or "--quiet":
                    result.Quiet = true;
                    break;
                case "--port":
                    if (!TryValue(args, ref i, inlineValue, arg, out var port, out error))
                    {
                        return null;
                    }

                    if (!int.TryParse(port, NumberStyles.None, CultureInfo.InvariantCulture, out var number) || number > 65535)
                    {
                        error = $"--port: '{port}' is not a port number (0 to 65535).";
                        return null;
                    }

                    result.Port = number;
                    break;
                case "--host":
                    if (!TryValue(args, ref i, inlineValue, arg, out var host, out error))
                    {
                        return null;
                    }

                    if (host == "localhost")
                    {
                        result.Address = null;
                    }
                    else if (IPAddress.TryParse(host.Trim('[', ']'), out var address))
                    {
                        result.Address = address;
                    }
                    else
                    {
                        error = $"--host: '{host}' is not an IP address or 'localhost'.";
                        return null;
                    }

                    result.Host = host;
                    break;
                default:
                    if (arg.Length > 1 && arg[0] == '-')
                    {
                        error = $"{arg}: unknown option (see --help).";
                        return null;
                    }

                    if (rootSeen)
                    {
                        error = $"'{arg}': only one ROOT folder can be served.";
                        return null;
                    }

                    rootSeen = true;
                    result.Root = arg;
                    break;
            }
        }

        if (!result.ShowHelp && !result.ShowVersion && !Directory.Exists(result.Root))
        {
            error = $"ROOT: '{result.Root}' does not exist or is not a folder.";
            return null;
        }

        error = null;
        return result;
    }

    private static bool TryValue(string[] args, ref int i, string? inlineValue, string name, out string value, out string? error)
    {
        if (inlineValue is not null)
        {
            value = inlineValue;
        }
        else if (i + 1 < args.Length)
        {
            value = args[++i];
        }
        else
        {
            value = "";
            error = $"{name}: a value is required.";
            return false;
        }

        error = null;
        return true;
    }
}
