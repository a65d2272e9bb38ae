namespace Peregrine.Server.Configuration;

/// <summary>
/// Every setting of the standalone server, in the order the help lists them. The flag names
/// are a stable interface: scripts, unit files and container images drive them.
/// </summary>
internal static class OptionTable
{
    public static readonly OptionSpec Root = new("root", Arity.Value, "ROOT",
        "The folder to serve (default: the current directory).",
        static (s, v, e) =>
        {
            if (ValueParsers.NonEmpty(v, e, out var root))
            {
                s.Root = root;
            }
        })
    { IsPositional = true, IsPath = true };

    public static readonly OptionSpec Port = new("port", Arity.Value, "N",
        "Port to listen on (default 8080; 0 picks a free port).",
        static (s, v, e) =>
        {
            if (ValueParsers.Port(v, e, out var port))
            {
                s.Port = port;
            }
        });

    public static readonly OptionSpec Host = new("host", Arity.Value, "ADDR",
        "Address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all, localhost for both loopbacks).",
        static (s, v, e) =>
        {
            if (ValueParsers.Host(v, e, out var address))
            {
                s.Host = v.Single;
                s.Address = address;
            }
        });

    public static readonly OptionSpec Spa = new("spa", Arity.OptionalValue, "FILE",
        "Single-page app: answer navigations that match no file with FILE (default index.html).",
        static (s, v, e) =>
        {
            if (v.Disabled)
            {
                s.Spa = null;
            }
            else if (ValueParsers.SpaFile(v, e, out var file))
            {
                s.Spa = file;
            }
        });

    public static readonly OptionSpec Listing = new("listing", Arity.Switch, null,
        "List folders that have no index file (HTML, or JSON for Accept: application/json).",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.Listing = on;
            }
        });

    public static readonly OptionSpec Cors = new("cors", Arity.Values, "ORIGIN",
        "Allow cross-origin reads from these origins; bare --cors allows any (*).",
        static (s, v, e) =>
        {
            var origins = v.Values.Count == 0 ? ["*"] : v.Values;
            var ok = true;
            foreach (var origin in origins)
            {
                ok &= ValueParsers.Origin(v, origin, e);
            }

            if (ok)
            {
                s.Cors = [.. origins];
            }
        })
    { EnvironmentListHelp = "separated by commas or spaces" };

    public static readonly OptionSpec Header = new("header", Arity.Repeated, "'NAME: VALUE'",
        "Add a response header to every file; repeat for more.",
        static (s, v, e) =>
        {
            var headers = new List<KeyValuePair<string, string>>();
            var ok = true;
            foreach (var text in v.Values)
            {
                if (!ValueParsers.Header(v, text, e, out var header))
                {
                    ok = false;
                }
                else if (headers.Any(h => string.Equals(h.Key, header.Key, StringComparison.OrdinalIgnoreCase)))
                {
                    e.Add($"{v.Describe()}: the header '{header.Key}' is given twice.");
                    ok = false;
                }
                else
                {
                    headers.Add(header);
                }
            }

            if (ok)
            {
                s.Headers = headers;
            }
        })
    { EnvironmentListHelp = "one per line" };

    public static readonly OptionSpec Cache = new("cache", Arity.Repeated, "'GLOB=VALUE'",
        "Cache-Control for files matching GLOB (*.html, assets/**); first match wins; repeat for more.",
        static (s, v, e) =>
        {
            var rules = new List<CacheRule>();
            foreach (var text in v.Values)
            {
                if (ValueParsers.CacheRule(v, text, e, out var rule))
                {
                    rules.Add(rule);
                }
            }

            if (rules.Count == v.Values.Count)
            {
                s.Cache = rules;
            }
        })
    { EnvironmentListHelp = "one per line" };

    public static readonly OptionSpec AccessLog = new("accessLog", Arity.OptionalValue, "FILE",
        "Log one line per request to FILE, or to standard output when bare or '-'.",
        static (s, v, e) =>
        {
            if (v.Disabled)
            {
                s.AccessLog = null;
            }
            else if (v.Values.Count == 0)
            {
                s.AccessLog = "-";
            }
            else if (ValueParsers.NonEmpty(v, e, out var target))
            {
                s.AccessLog = target;
            }
        })
    { IsPath = true };

    public static readonly OptionSpec Metrics = new("metrics", Arity.Switch, null,
        "Serve Prometheus metrics at /metrics (health is always at /healthz).",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.Metrics = on;
            }
        });

    public static readonly OptionSpec NoWatch = new("noWatch", Arity.Switch, null,
        "Index once at start-up; do not watch ROOT for changes.",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.NoWatch = on;
            }
        });

    public static readonly OptionSpec NoCompression = new("noCompression", Arity.Switch, null,
        "Do not compress files (sidecars such as app.js.br are not served either).",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.NoCompression = on;
            }
        });

    public static readonly OptionSpec NoFastPath = new("noFastPath", Arity.Switch, null,
        "Send every request through Kestrel's HTTP layer and the middleware (for comparison).",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.NoFastPath = on;
            }
        });

    public static readonly OptionSpec NoInlineIo = new("noInlineIo", Arity.Switch, null,
        "Run request handling on the thread pool instead of the socket threads (on by default without TLS).",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.NoInlineIo = on;
            }
        });

    public static readonly OptionSpec CompressionCache = new("compressionCache", Arity.Value, "DIR",
        "Keep compressed files in DIR across restarts (writable by the server only).",
        static (s, v, e) =>
        {
            if (ValueParsers.NonEmpty(v, e, out var folder))
            {
                s.CompressionCache = folder;
            }
        })
    { IsPath = true };

    public static readonly OptionSpec MemoryBudget = new("memoryBudget", Arity.Value, "SIZE",
        "Most bytes of file content held in memory, as 268435456, 256M or 1G (default 256M).",
        static (s, v, e) =>
        {
            if (ValueParsers.Size(v, e, out var bytes))
            {
                s.MemoryBudget = bytes;
            }
        });

    public static readonly OptionSpec TlsCert = new("tlsCert", Arity.Value, "FILE",
        "Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain; needs --tls-key.",
        static (s, v, e) =>
        {
            if (ValueParsers.NonEmpty(v, e, out var file))
            {
                s.TlsCert = file;
            }
        })
    { IsPath = true };

    public static readonly OptionSpec TlsKey = new("tlsKey", Arity.Value, "FILE",
        "The PEM private key for --tls-cert (encrypted keys take --tls-password).",
        static (s, v, e) =>
        {
            if (ValueParsers.NonEmpty(v, e, out var file))
            {
                s.TlsKey = file;
            }
        })
    { IsPath = true };

    public static readonly OptionSpec TlsPfx = new("tlsPfx", Arity.Value, "FILE",
        "Serve HTTPS with this PKCS#12 (.pfx/.p12) certificate and key instead.",
        static (s, v, e) =>
        {
            if (ValueParsers.NonEmpty(v, e, out var file))
            {
                s.TlsPfx = file;
            }
        })
    { IsPath = true };

    public static readonly OptionSpec TlsPassword = new("tlsPassword", Arity.Value, "PW",
        "Password of the --tls-pfx file or the encrypted --tls-key (prefer the variable: ps shows arguments).",
        static (s, v, _) => s.TlsPassword = v.Single);

    public static readonly OptionSpec ShutdownTimeout = new("shutdownTimeout", Arity.Value, "SECONDS",
        "On SIGTERM or Ctrl+C, let responses in flight finish for this long (default 10).",
        static (s, v, e) =>
        {
            if (ValueParsers.Seconds(v, e, out var timeout))
            {
                s.ShutdownTimeout = timeout;
            }
        });

    public static readonly OptionSpec Quiet = new("quiet", Arity.Switch, null,
        "Print only errors.",
        static (s, v, e) =>
        {
            if (ValueParsers.Boolean(v, e, out var on))
            {
                s.Quiet = on;
            }
        })
    { ShortFlag = "-q" };

    public static readonly IReadOnlyList<OptionSpec> All =
    [
        Root, Port, Host, Spa, Listing, Cors, Header, Cache, AccessLog, Metrics, NoWatch, NoCompression,
        NoFastPath, NoInlineIo, CompressionCache, MemoryBudget, TlsCert, TlsKey, TlsPfx, TlsPassword, ShutdownTimeout, Quiet,
    ];

    /// <summary>The config file: a command-line flag and an environment variable, not a key in the file.</summary>
    public static readonly OptionSpec Config = new("config", Arity.Value, "FILE",
        "Read settings from a JSON file; keys are the flag names in camelCase (tlsCert).",
        static (_, _, _) => { })
    { IsPath = true };

    public const string ConfigFlag = "--config";

    public static OptionSpec? ByKey(string key)
    {
        foreach (var option in All)
        {
            if (option.Key == key)
            {
                return option;
            }
        }

        return null;
    }
}
