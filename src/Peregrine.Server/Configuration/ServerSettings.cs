using System.Net;
using Peregrine;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Configuration;

/// <summary>
/// The standalone server's settings once every source has been read. Defaults are the ones
/// the help states. Owns the certificate and access log stream opened while loading.
/// </summary>
internal sealed class ServerSettings : IDisposable
{
    public const string DefaultSpaFile = "index.html";

    public const string DefaultNotFoundPage = "404.html";

    public static readonly TimeSpan DefaultShutdownTimeout = TimeSpan.FromSeconds(10);

    public string Root { get; set; } = ".";

    public int Port { get; set; } = 8080;

    public string Host { get; set; } = "127.0.0.1";

    /// <summary>The address to bind; null for <c>localhost</c>, which binds both loopbacks.</summary>
    public IPAddress? Address { get; set; } = IPAddress.Loopback;

    public bool Quiet { get; set; }

    public bool Verbose { get; set; }

    public string? Spa { get; set; }

    /// <summary>The 404 page under the root as given (<c>--404</c>); null for <see cref="DefaultNotFoundPage"/>, used when the root has it.</summary>
    public string? NotFoundPage { get; set; }

    public bool CleanUrls { get; set; }

    public bool Listing { get; set; }

    /// <summary>The index file names in the order given; null keeps the library's default.</summary>
    public List<string>? Index { get; set; }

    public bool Hidden { get; set; }

    public List<string> Cors { get; set; } = [];

    /// <summary>Response headers in the order given.</summary>
    public List<KeyValuePair<string, string>> Headers { get; set; } = [];

    public List<CacheRule> Cache { get; set; } = [];

    /// <summary>The access log's file, <c>-</c> for standard output, or null for none.</summary>
    public string? AccessLog { get; set; }

    public bool Metrics { get; set; }

    public bool NoWatch { get; set; }

    public bool NoCompression { get; set; }

    public bool NoDictionaries { get; set; }

    public bool NoFastPath { get; set; }

    public bool NoTlsSizing { get; set; }

    public bool KestrelTls { get; set; }

    public bool NoInlineIo { get; set; }

    public string? CompressionCache { get; set; }

    public long? MemoryBudget { get; set; }

    public long? CopyLimit { get; set; }

    public string? TlsCert { get; set; }

    public string? TlsKey { get; set; }

    public string? TlsPfx { get; set; }

    public string? TlsPassword { get; set; }

    /// <summary>The port that answers plain HTTP with a redirect to HTTPS; null for none.</summary>
    public int? RedirectHttp { get; set; }

    public TimeSpan ShutdownTimeout { get; set; } = DefaultShutdownTimeout;

    /// <summary>Users and passwords given as <c>--basic-auth USER:PASSWORD</c>.</summary>
    public List<(string User, string Password)> BasicAuth { get; set; } = [];

    public string? BasicAuthFile { get; set; }

    public bool AllowInsecureAuth { get; set; }

    /// <summary>The pointer object's name under the prefix, for an s3:// root; null serves the prefix itself.</summary>
    public string? BucketPointer { get; set; }

    public TimeSpan? BucketPoll { get; set; }

    /// <summary>The path that takes S3 event notifications; null for none.</summary>
    public string? BucketNotify { get; set; }

    public string? BucketCache { get; set; }

    public bool BucketPathStyle { get; set; }

    /// <summary>True when ROOT names a bucket (<c>s3://BUCKET/PREFIX</c>) rather than a folder.</summary>
    public bool ServesBucket => Peregrine.Sources.Bucket.BucketLocation.IsBucketUri(Root);

    /// <summary>The users of <see cref="BasicAuth"/> and <see cref="BasicAuthFile"/>, loaded; null when the site is open.</summary>
    public Auth.BasicAuthenticator? Authenticator { get; set; }

    /// <summary>The server certificate as loaded at start-up; null serves cleartext.</summary>
    public LoadedCertificate? Certificate { get; set; }

    /// <summary>The access log's open stream; null when there is no access log.</summary>
    public Stream? AccessLogStream { get; set; }

    public bool AccessLogToStandardOutput => AccessLog == "-";

    /// <summary>The value that set each option, by key, for messages about it after parsing.</summary>
    public Dictionary<string, SettingValue> Sources { get; } = new(StringComparer.Ordinal);

    /// <summary>Names an option and where its value came from: <c>--tls-cert (command line)</c>.</summary>
    public string Describe(OptionSpec option)
        => Sources.TryGetValue(option.Key, out var value) ? value.Describe() : $"{option.NameIn(SourceKind.CommandLine)} ({SettingSource.Default})";

    /// <summary>Copies the settings that the library implements onto its options.</summary>
    public void ApplyTo(PeregrineOptions options)
    {
        if (ServesBucket)
        {
            // The copy's folder becomes the root when the instance is made.
            options.Bucket = new BucketOptions
            {
                Uri = Root,
                Pointer = BucketPointer,
                CacheDirectory = BucketCache,
                ForcePathStyle = BucketPathStyle,
            };
            if (BucketPoll is { } poll)
            {
                options.Bucket.PollInterval = poll;
            }
        }
        else
        {
            options.Root = Root;
        }

        options.SpaFallback = Spa;
        options.NotFoundPage = NotFoundPage ?? DefaultNotFoundPage;
        options.BuiltInNotFoundPage = true;
        options.CleanUrls = CleanUrls;
        options.DirectoryListing = Listing;
        if (Index is not null)
        {
            options.DefaultDocuments = [.. Index];
        }

        options.ServeHiddenFiles = Hidden;
        options.CorsOrigins = [.. Cors];
        foreach (var (name, value) in Headers)
        {
            options.Headers[name] = value;
        }

        options.CacheRules = [.. Cache];
        options.Watch.Enabled = !NoWatch;
        options.Compression.Enabled = !NoCompression;
        options.Compression.Dictionaries.Enabled = !NoDictionaries;
        options.Compression.CacheDirectory = CompressionCache;
        if (MemoryBudget is { } budget)
        {
            options.MemoryBudget = budget;
        }

        if (CopyLimit is { } copyLimit)
        {
            options.Watch.MaxCopiedFileSize = copyLimit;
        }

        if (Authenticator is not null)
        {
            // Every file then answers a request with credentials: no shared cache may keep it.
            Auth.PrivateCaching.Apply(options);
        }
    }

    public void Dispose()
    {
        AccessLogStream?.Dispose();
        AccessLogStream = null;
        Certificate?.Dispose();
        Certificate = null;
    }
}
