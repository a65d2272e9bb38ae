using System.Net;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Every setting of the standalone server, in the order the help lists them. The flag names
/// are a stable interface: scripts, unit files and container images drive them.
/// </summary>
internal static class OptionTable
{
    public static readonly OptionSpec Root = Value<string>("root", "ROOT",
        "The folder to serve (default: the current directory), or a bucket: s3://BUCKET/PREFIX, copied and kept current (credentials and endpoint from AWS_* variables).",
        ValueParsers.NonEmpty, static (s, root) => s.Root = root, isPath: true, isPositional: true);

    public static readonly OptionSpec Port = Value<int>("port", "N",
        "Port to listen on (default 8080; 0 picks a free port). Without PEREGRINE_PORT, the PORT variable that container platforms set is read.",
        ValueParsers.Port, static (s, port) => s.Port = port, shortFlag: "-p");

    public static readonly OptionSpec Host = Value<(string Name, IPAddress? Address)>("host", "ADDR",
        "Address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all, localhost for both loopbacks).",
        ValueParsers.Host, static (s, host) => (s.Host, s.Address) = host, shortFlag: "-a");

    public static readonly OptionSpec Spa = OptionalValue("spa", "FILE",
        "Single-page app: answer navigations that match no file with FILE (default index.html), which must be under ROOT.",
        ValueParsers.SpaFile, static (s, file) => s.Spa = file);

    public static readonly OptionSpec NotFound = Value<string>("404", "FILE",
        "The page sent with a 404 for a navigation that matches no file (default 404.html, when the root has one; otherwise a small built-in page); a FILE given must be under ROOT.",
        ValueParsers.RootFile, static (s, file) => s.NotFoundPage = file);

    public static readonly OptionSpec CleanUrls = Switch("cleanUrls", static (s, on) => s.CleanUrls = on,
        "Serve about.html at /about, and redirect /about.html there (308).");

    public static readonly OptionSpec Listing = Switch("listing", static (s, on) => s.Listing = on,
        "List folders that have no index file (HTML, or JSON for Accept: application/json).");

    public static readonly OptionSpec Index = Items<string>("index", Arity.Repeated, "NAME",
        "File served for a folder's URL, tried in order (default index.html, then index.htm); repeat for more.",
        ValueParsers.IndexFile, static (s, names) => s.Index = names, "one per line");

    public static readonly OptionSpec Hidden = Switch("hidden", static (s, on) => s.Hidden = on,
        "Serve files and folders whose name starts with a dot (.well-known is served without it).");

    public static readonly OptionSpec Cors = Items<string>("cors", Arity.Values, "ORIGIN",
        "Allow cross-origin reads from these origins; bare --cors allows any (*).",
        ValueParsers.Origin, static (s, origins) => s.Cors = origins, "separated by commas or spaces", bare: "*");

    public static readonly OptionSpec Header = Items<KeyValuePair<string, string>>("header", Arity.Repeated, "'NAME: VALUE'",
        "Add a response header to every file; repeat for more.",
        ValueParsers.Header, static (s, headers) => s.Headers = headers, "one per line");

    public static readonly OptionSpec Cache = Items<CacheRule>("cache", Arity.Repeated, "'GLOB=VALUE'",
        "Cache-Control for files matching GLOB (*.html, assets/**); first match wins; repeat for more.",
        ValueParsers.CacheRule, static (s, rules) => s.Cache = rules, "one per line");

    public static readonly OptionSpec AccessLog = OptionalValue("accessLog", "FILE",
        "Log one line per request to FILE, or to standard output when bare or '-'.",
        ValueParsers.FileOrStandardOutput, static (s, target) => s.AccessLog = target, isPath: true);

    // Switches, one a line: on when present (--no-watch), or set to true or false.
    public static readonly OptionSpec Metrics = Switch("metrics", static (s, on) => s.Metrics = on, "Serve Prometheus metrics at /metrics (health is always at /healthz).");
    public static readonly OptionSpec NoWatch = Switch("noWatch", static (s, on) => s.NoWatch = on, "Index once at start-up; do not watch ROOT for changes.");
    public static readonly OptionSpec NoCompression = Switch("noCompression", static (s, on) => s.NoCompression = on, "Do not compress files (sidecars such as app.js.br are not served either).");
    public static readonly OptionSpec NoDictionaries = Switch("noDictionaries", static (s, on) => s.NoDictionaries = on, "Do not send fingerprinted files as deltas against the versions a browser holds (RFC 9842 compression dictionaries).");
    public static readonly OptionSpec NoFastPath = Switch("noFastPath", static (s, on) => s.NoFastPath = on, "Send every request through Kestrel's HTTP layer and the middleware (for comparison).");
    public static readonly OptionSpec NoTlsSizing = Switch("noTlsSizing", static (s, on) => s.NoTlsSizing = on, "Leave TLS output to Kestrel's 4 KiB writes instead of the fast path's 32 KiB ones (for comparison).");
    public static readonly OptionSpec KestrelTls = Switch("kestrelTls", static (s, on) => s.KestrelTls = on, "Leave every TLS handshake to Kestrel, including those of connections that offer only HTTP/1.1, which the server otherwise ends itself (for comparison).");
    public static readonly OptionSpec NoInlineIo = Switch("noInlineIo", static (s, on) => s.NoInlineIo = on, "Run request handling on the thread pool instead of the socket threads (on by default; over TLS, for connections that do not offer HTTP/2), and read cleartext connections with Kestrel's transport instead of the reactor's epoll threads.");

    public static readonly OptionSpec CompressionCache = PathValue("compressionCache", "DIR", static (s, folder) => s.CompressionCache = folder,
        "Keep compressed files in DIR across restarts (writable by the server only).");

    public static readonly OptionSpec MemoryBudget = Value<long>("memoryBudget", "SIZE",
        "Most bytes of files and their compressed forms held in memory, as 268435456, 256M or 1G (default 256M).",
        ValueParsers.Size, static (s, bytes) => s.MemoryBudget = bytes);

    public static readonly OptionSpec CopyLimit = Value<long>("copyLimit", "SIZE",
        "Serve files sent from disk up to SIZE from a private copy of each published version, so one rewritten in place is served whole at its previous version (default 64M; 0 turns copies off).",
        ValueParsers.Size, static (s, bytes) => s.CopyLimit = bytes);

    public static readonly OptionSpec TlsCert = PathValue("tlsCert", "FILE", static (s, file) => s.TlsCert = file,
        "Serve HTTPS (HTTP/2 and HTTP/1.1 by ALPN) with this PEM certificate chain; needs --tls-key.");

    public static readonly OptionSpec TlsKey = PathValue("tlsKey", "FILE", static (s, file) => s.TlsKey = file,
        "The PEM private key for --tls-cert (encrypted keys take --tls-password).");

    public static readonly OptionSpec TlsPfx = PathValue("tlsPfx", "FILE", static (s, file) => s.TlsPfx = file,
        "Serve HTTPS with this PKCS#12 (.pfx/.p12) certificate and key instead.");

    public static readonly OptionSpec TlsPassword = Value<string>("tlsPassword", "PW",
        "Password of the --tls-pfx file or the encrypted --tls-key (prefer the variable: ps shows arguments).",
        ValueParsers.Text, static (s, password) => s.TlsPassword = password);

    public static readonly OptionSpec RedirectHttp = Value<int>("redirectHttp", "PORT",
        "Also listen for plain HTTP on PORT and answer it with 308 to the same URL over HTTPS; needs TLS.",
        ValueParsers.Port, static (s, port) => s.RedirectHttp = port);

    public static readonly OptionSpec BasicAuth = Items<(string User, string Password)>("basicAuth", Arity.Repeated, "USER:PASSWORD",
        "Require this user and password (HTTP Basic authentication); repeat for more users.",
        ValueParsers.Credentials, static (s, users) => s.BasicAuth = users, "one per line");

    public static readonly OptionSpec BasicAuthFile = PathValue("basicAuthFile", "FILE", static (s, file) => s.BasicAuthFile = file,
        "Require a user and password from FILE, htpasswd's user:hash lines (bcrypt $2y$ or SHA-512 crypt $6$).");

    public static readonly OptionSpec AllowInsecureAuth = Switch("allowInsecureAuth", static (s, on) => s.AllowInsecureAuth = on,
        "Allow Basic authentication without TLS (when a proxy in front terminates it).");

    public static readonly OptionSpec ShutdownTimeout = Value<TimeSpan>("shutdownTimeout", "SECONDS",
        "On SIGTERM or Ctrl+C, let responses in flight finish for this long (default 10).",
        ValueParsers.Seconds, static (s, timeout) => s.ShutdownTimeout = timeout);

    public static readonly OptionSpec BucketPointer = Value<string>("bucketPointer", "NAME",
        "With an s3:// ROOT: serve PREFIX/releases/ID/, where the object PREFIX/NAME holds ID, and switch whole when it changes (atomic deploys).",
        ValueParsers.NonEmpty, static (s, name) => s.BucketPointer = name);

    public static readonly OptionSpec BucketPoll = Value<TimeSpan>("bucketPoll", "SECONDS",
        "With an s3:// ROOT: look for changes this often (default 5; 0 for notifications only).",
        ValueParsers.Seconds, static (s, interval) => s.BucketPoll = interval);

    public static readonly OptionSpec BucketNotify = Value<string>("bucketNotify", "PATH",
        "With an s3:// ROOT: take S3 event notifications by POST at PATH, as /_peregrine/bucket-events, and sync at once (keep PATH private).",
        ValueParsers.NonEmpty, static (s, path) => s.BucketNotify = path);

    public static readonly OptionSpec BucketCache = PathValue("bucketCache", "DIR", static (s, folder) => s.BucketCache = folder,
        "With an s3:// ROOT: keep the copy of the bucket in a folder of this server's own under DIR (default: the temporary folder).");

    public static readonly OptionSpec BucketPathStyle = Switch("bucketPathStyle", static (s, on) => s.BucketPathStyle = on,
        "With an s3:// ROOT: address the bucket as https://HOST/BUCKET, as Ceph RGW and MinIO usually need.");

    public static readonly OptionSpec Quiet = Switch("quiet", static (s, on) => s.Quiet = on, "Print only errors.", shortFlag: "-q");
    public static readonly OptionSpec Verbose = Switch("verbose", static (s, on) => s.Verbose = on, "Print debug messages too (a skipped link, a certificate checked and reloaded).", shortFlag: "-v");

    public static readonly IReadOnlyList<OptionSpec> All =
    [
        Root, Port, Host, Spa, NotFound, CleanUrls, Listing, Index, Hidden, Cors, Header, Cache, AccessLog, Metrics, NoWatch, NoCompression,
        NoDictionaries, NoFastPath, NoTlsSizing, KestrelTls, NoInlineIo, CompressionCache, MemoryBudget, CopyLimit, TlsCert, TlsKey, TlsPfx, TlsPassword, RedirectHttp,
        BasicAuth, BasicAuthFile, AllowInsecureAuth, ShutdownTimeout, BucketPointer, BucketPoll, BucketNotify, BucketCache, BucketPathStyle,
        Quiet, Verbose,
    ];

    /// <summary>The config file: a command-line flag and an environment variable, not a key in the file.</summary>
    public static readonly OptionSpec Config = new("config", Arity.Value, "FILE",
        "Read settings from a JSON file; keys are the flag names in camelCase (tlsCert).",
        static (_, _, _) => { })
    { IsPath = true };

    public const string ConfigFlag = "--config";

    /// <summary>An option on when present (<c>--listing</c>), or set to true or false.</summary>
    private static OptionSpec Switch(string key, Action<ServerSettings, bool> store, string help, string? shortFlag = null)
        => new(key, Arity.Switch, null, help, Parse(ValueParsers.Boolean, store)) { ShortFlag = shortFlag };

    /// <summary>A file or folder; a relative path in a config file is taken from the file's folder.</summary>
    private static OptionSpec PathValue(string key, string valueName, Action<ServerSettings, string> store, string help)
        => Value(key, valueName, help, ValueParsers.NonEmpty, store, isPath: true);

    /// <summary>An option with one value, stored once it parses.</summary>
    private static OptionSpec Value<T>(string key, string valueName, string help, ValueParser<T> parse, Action<ServerSettings, T> store, bool isPath = false, bool isPositional = false, string? shortFlag = null)
        => new(key, Arity.Value, valueName, help, Parse(parse, store)) { IsPath = isPath, IsPositional = isPositional, ShortFlag = shortFlag };

    /// <summary>An option whose value is optional (<c>--spa</c>, <c>--spa=app.html</c>); turned off (<c>--spa=false</c>), it stores null.</summary>
    private static OptionSpec OptionalValue(string key, string valueName, string help, ValueParser<string> parse, Action<ServerSettings, string?> store, bool isPath = false)
    {
        var parseAndStore = Parse(parse, store);
        return new(key, Arity.OptionalValue, valueName, help, (s, v, e) =>
        {
            if (v.Disabled)
            {
                store(s, null);
            }
            else
            {
                parseAndStore(s, v, e);
            }
        })
        { IsPath = isPath };
    }

    /// <summary>
    /// A list option: every item is parsed, and the list is stored only when all of them are.
    /// Given bare, it holds <paramref name="bare"/> if there is one.
    /// </summary>
    private static OptionSpec Items<T>(string key, Arity arity, string valueName, string help, ItemParser<T> parse, Action<ServerSettings, List<T>> store, string environmentListHelp, string? bare = null)
        => new(key, arity, valueName, help, (s, v, e) =>
        {
            var texts = v.Values.Count == 0 && bare is not null ? [bare] : v.Values;
            var items = new List<T>(texts.Count);
            var ok = true;
            foreach (var text in texts)
            {
                if (parse(v, text, items, e, out var item))
                {
                    items.Add(item);
                }
                else
                {
                    ok = false;
                }
            }

            if (ok)
            {
                store(s, items);
            }
        })
        { EnvironmentListHelp = environmentListHelp };

    private static Action<ServerSettings, SettingValue, List<string>> Parse<T>(ValueParser<T> parse, Action<ServerSettings, T> store)
        => (s, v, e) =>
        {
            if (parse(v, e, out var value))
            {
                store(s, value);
            }
        };

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
