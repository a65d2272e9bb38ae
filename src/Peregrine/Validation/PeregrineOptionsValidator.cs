using Microsoft.Extensions.Options;
using Peregrine.Sources;

namespace Peregrine.Validation;

/// <summary>
/// Validates <see cref="PeregrineOptions"/> once, at start-up, collecting every error so that
/// one run shows all of them. Each message names the option.
/// </summary>
/// <remarks>
/// The rules for single values (<see cref="RootProblem"/>, <see cref="OriginProblem"/>,
/// <see cref="HeaderProblem"/>, <see cref="HeaderValueProblem"/>, <see cref="SpaFallbackProblem"/>,
/// <see cref="DefaultDocumentProblem"/>)
/// are the only copy: the standalone server checks each flag's values with them and puts the
/// flag's name and source where this class puts the option's name.
/// </remarks>
internal sealed class PeregrineOptionsValidator(IBucketSourceFactory? buckets = null) : IValidateOptions<PeregrineOptions>
{
    public ValidateOptionsResult Validate(string? name, PeregrineOptions options)
    {
        var errors = Collect(options, buckets);
        if (!string.IsNullOrEmpty(name))
        {
            // One application may hold several instances: say which one is wrong.
            errors = [.. errors.Select(error => $"Peregrine '{name}': {error}")];
        }

        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }

    /// <param name="options">The options.</param>
    /// <param name="buckets">The bucket package's rules, when it was added: a bucket is checked by them.</param>
    internal static List<string> Collect(PeregrineOptions options, IBucketSourceFactory? buckets = null)
    {
        var errors = new List<string>();
        if (options.Bucket is { } bucket)
        {
            // The bucket's copy becomes the root: a folder given as well would never be served.
            if (!string.IsNullOrWhiteSpace(options.Root))
            {
                errors.Add($"Root: '{options.Root}' and Bucket: '{bucket.Uri}' both name the site; set one.");
            }

            if (buckets is null)
            {
                errors.Add(IBucketSourceFactory.NotAdded);
            }
            else
            {
                errors.AddRange(buckets.Problems(bucket));
            }
        }
        else
        {
            Add(errors, nameof(options.Root), string.IsNullOrWhiteSpace(options.Root)
                ? "a folder to serve is required: set Root, or give the application a web root (a wwwroot folder in its content root), which is served when Root is empty."
                : RootProblem(options.Root));
        }

        CollectMounts(options, errors);

        var requestPath = options.RequestPath.Value;
        if (!string.IsNullOrEmpty(requestPath) && (requestPath[0] != '/' || requestPath[^1] == '/'))
        {
            errors.Add($"RequestPath: '{requestPath}' must start with '/' and must not end with one.");
        }

        if (options.DefaultDocuments is null)
        {
            errors.Add("DefaultDocuments: must be a list (it may be empty).");
        }
        else
        {
            foreach (var document in options.DefaultDocuments)
            {
                Add(errors, nameof(options.DefaultDocuments), DefaultDocumentProblem(document));
            }
        }

        if (options.ServeUnknownFileTypes)
        {
            Add(errors, nameof(options.DefaultContentType), HeaderValueProblem(options.DefaultContentType, required: true));
        }

        if (options.ContentTypes is null)
        {
            errors.Add("ContentTypes: must be a dictionary (it may be empty).");
        }
        else
        {
            foreach (var (extension, type) in options.ContentTypes)
            {
                if (string.IsNullOrEmpty(extension) || extension[0] != '.' || extension.Length < 2)
                {
                    errors.Add($"ContentTypes: the extension '{extension}' must start with a dot, as in '.md'.");
                }

                Add(errors, $"ContentTypes[{extension}]", HeaderValueProblem(type, required: true));
            }
        }

        Add(errors, nameof(options.CacheControl), HeaderValueProblem(options.CacheControl, required: false));
        Add(errors, nameof(options.FingerprintedCacheControl), HeaderValueProblem(options.FingerprintedCacheControl, required: false));

        if (options.MaxCachedFileSize < 0)
        {
            errors.Add($"MaxCachedFileSize: {options.MaxCachedFileSize} must be zero or more.");
        }

        if (options.MaxHashedFileSize < 0)
        {
            errors.Add($"MaxHashedFileSize: {options.MaxHashedFileSize} must be zero or more.");
        }

        if (options.MemoryBudget < 0)
        {
            errors.Add($"MemoryBudget: {options.MemoryBudget} must be zero or more.");
        }

        foreach (var rule in options.CacheRules ?? [])
        {
            if (rule is null || string.IsNullOrWhiteSpace(rule.Glob))
            {
                errors.Add("CacheRules: every rule needs a glob.");
                continue;
            }

            Add(errors, $"CacheRules[{rule.Glob}]", HeaderValueProblem(rule.CacheControl, required: false));
        }

        foreach (var (name, value) in options.Headers ?? new Dictionary<string, string>())
        {
            Add(errors, nameof(options.Headers), HeaderProblem(name, value));
        }

        foreach (var origin in options.CorsOrigins ?? [])
        {
            Add(errors, nameof(options.CorsOrigins), OriginProblem(origin));
        }

        if (options.SpaFallback is { } spa)
        {
            Add(errors, nameof(options.SpaFallback), SpaFallbackProblem(spa));
        }

        if (options.NotFoundPage is { } notFound)
        {
            Add(errors, nameof(options.NotFoundPage), RootFileProblem(notFound));
        }

        if (options.Watch is { } watch)
        {
            if (watch.PollingInterval is { } polling && polling < TimeSpan.FromMilliseconds(100))
            {
                errors.Add($"Watch.PollingInterval: {polling} must be at least 100 ms.");
            }

            if (watch.CoalescingDelay < TimeSpan.Zero || watch.CoalescingDelay > TimeSpan.FromSeconds(10))
            {
                errors.Add($"Watch.CoalescingDelay: {watch.CoalescingDelay} must be between 0 and 10 s.");
            }

            if (watch.RootCheckInterval < TimeSpan.FromMilliseconds(50))
            {
                errors.Add($"Watch.RootCheckInterval: {watch.RootCheckInterval} must be at least 50 ms.");
            }

            if (watch.SettleTime < TimeSpan.FromMilliseconds(10) || watch.SettleTime > TimeSpan.FromMinutes(1))
            {
                errors.Add($"Watch.SettleTime: {watch.SettleTime} must be between 10 ms and 1 minute.");
            }

            if (watch.OpenWriteLimit < TimeSpan.FromMilliseconds(100) || watch.OpenWriteLimit < watch.SettleTime)
            {
                errors.Add($"Watch.OpenWriteLimit: {watch.OpenWriteLimit} must be at least 100 ms and at least Watch.SettleTime.");
            }

            if (watch.MaxCopiedFileSize < 0)
            {
                errors.Add($"Watch.MaxCopiedFileSize: {watch.MaxCopiedFileSize} must be zero (no copies) or more.");
            }

            if (watch.CopyBudget < 0)
            {
                errors.Add($"Watch.CopyBudget: {watch.CopyBudget} must be zero (no copies) or more.");
            }

            // Created and written to now, so that a read-only or misspelt folder fails the
            // start-up rather than leaving every large file to 503s under writers.
            if (watch.CopyDirectory is not null && Compression.CompressionOptionsValidator.CacheDirectoryProblem(watch.CopyDirectory) is { } copyProblem)
            {
                errors.Add($"Watch.CopyDirectory: {copyProblem}");
            }
        }
        else
        {
            errors.Add("Watch: must be set.");
        }

        Compression.CompressionOptionsValidator.Collect(options.Compression, errors);
        return errors;
    }

    private static void CollectMounts(PeregrineOptions options, List<string> errors)
    {
        if (options.Mounts is null)
        {
            errors.Add("Mounts: must be a list (it may be empty).");
            return;
        }

        for (var i = 0; i < options.Mounts.Count; i++)
        {
            var name = $"Mounts[{i}]";
            if (options.Mounts[i] is not { } mount)
            {
                errors.Add($"{name}: must be set.");
                continue;
            }

            Add(errors, name + ".UrlPath", MountUrlPathProblem(mount.UrlPath, options.ServeHiddenFiles));
            Add(errors, name + ".Root", RootProblem(mount.Root));
            if (mount.Files is { } files)
            {
                for (var j = 0; j < files.Count; j++)
                {
                    Add(errors, $"{name}.Files[{j}]", MountFileProblem(files[j]));
                }
            }
        }
    }

    /// <summary>
    /// The problem with a <see cref="ContentMount.UrlPath"/>, or <see langword="null"/>: <c>/</c>,
    /// or segments after a <c>/</c> each, none empty, <c>.</c> or <c>..</c>, and none a name
    /// that would be refused as hidden; no character a request path could not match as written
    /// (<c>%</c>, <c>?</c>, <c>#</c>, <c>\</c>, controls).
    /// </summary>
    internal static string? MountUrlPathProblem(string? urlPath, bool serveHiddenFiles)
    {
        const string Rule = "must be '/' or a path such as '/docs': starting with '/', not ending with one";
        if (string.IsNullOrEmpty(urlPath) || urlPath[0] != '/')
        {
            return $"'{urlPath}' {Rule}.";
        }

        if (urlPath == "/")
        {
            return null;
        }

        foreach (var segment in urlPath[1..].Split('/'))
        {
            if (segment.Length == 0 || segment is "." or "..")
            {
                return $"'{urlPath}' {Rule}, with no empty, '.' or '..' segment.";
            }

            if (segment.Any(c => c is '%' or '?' or '#' or '\\' || char.IsControl(c)))
            {
                return $"'{urlPath}' must not hold '%', '?', '#', '\\' or control characters: give the path as it is decoded.";
            }

            if (segment[0] == '.' && segment != ".well-known" && !serveHiddenFiles)
            {
                return $"'{urlPath}' has a hidden segment ('{segment}'), which is not served unless ServeHiddenFiles is on.";
            }
        }

        return null;
    }

    /// <summary>The problem with one of <see cref="ContentMount.Files"/>, or <see langword="null"/>: a path under the mount's folder, with a leading slash.</summary>
    internal static string? MountFileProblem(string? file)
        => string.IsNullOrEmpty(file) || file[0] != '/' || file.EndsWith('/') || file.Contains('\\')
            || file.Split('/').Skip(1).Any(segment => segment is "" or "." or "..")
            ? $"'{file}' must be a file's path under the mount's Root with a leading '/', such as '/css/site.css', with no empty, '.' or '..' segment."
            : null;

    /// <summary>The problem with <see cref="PeregrineOptions.Root"/>, or <see langword="null"/>.</summary>
    internal static string? RootProblem(string? root)
        => string.IsNullOrWhiteSpace(root) ? "a folder to serve is required."
            : !Directory.Exists(root) ? $"'{root}' does not exist or is not a folder."
            : null;

    /// <summary>
    /// The problem with one of <see cref="PeregrineOptions.CorsOrigins"/>, or <see langword="null"/>:
    /// it must be <c>*</c> or an origin, that is a scheme, a host and an optional port with no
    /// path, query or fragment (RFC 6454 §6.1), as a browser sends it in <c>Origin</c>.
    /// </summary>
    internal static string? OriginProblem(string? origin)
        => origin == "*" || (Uri.TryCreate(origin, UriKind.Absolute, out var uri)
            && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
            && uri.AbsolutePath == "/" && !origin.EndsWith('/') && uri.Query.Length == 0 && uri.Fragment.Length == 0)
            ? null
            : $"'{origin}' is not '*' or an origin such as 'https://app.example.com' (scheme, host, optional port, no path).";

    /// <summary>
    /// The problem with one of <see cref="PeregrineOptions.Headers"/>, or <see langword="null"/>:
    /// a token for a name (RFC 9110 §5.1) that is not one Peregrine sets itself, and a value.
    /// </summary>
    internal static string? HeaderProblem(string? name, string? value)
    {
        if (string.IsNullOrEmpty(name) || !name.All(IsTokenChar))
        {
            return $"'{name}' is not a valid header name.";
        }

        if (s_reservedHeaders.Contains(name))
        {
            return $"'{name}' is set by Peregrine for each response and cannot be configured.";
        }

        return HeaderValueProblem(value, required: true) is { } problem ? $"'{name}' {problem}" : null;
    }

    /// <summary>
    /// The problem with a value sent as a header field, or <see langword="null"/>: visible ASCII,
    /// spaces and tabs only (RFC 9110 §5.5). Anything else, CR and LF above all, would let a
    /// configuration value split the response. Worded to follow a name: "X-Frame: needs a value."
    /// </summary>
    internal static string? HeaderValueProblem(string? value, bool required)
    {
        if (value is null || (required && value.Length == 0))
        {
            return "needs a value.";
        }

        foreach (var c in value)
        {
            if (c is not ('\t' or (>= ' ' and <= '~')))
            {
                return $"holds a character not allowed in a header value (U+{(int)c:X4}); only visible ASCII, space and tab are.";
            }
        }

        return null;
    }

    /// <summary>The problem with <see cref="PeregrineOptions.SpaFallback"/>, or <see langword="null"/>.</summary>
    internal static string? SpaFallbackProblem(string spa) => RootFileProblem(spa, "index.html");

    /// <summary>
    /// The problem with a file named under the root (<see cref="PeregrineOptions.SpaFallback"/>,
    /// <see cref="PeregrineOptions.NotFoundPage"/>), or <see langword="null"/>: a relative path
    /// that stays under the root (no empty, <c>.</c> or <c>..</c> segment, no backslash), since
    /// it is looked up in the catalog as it is.
    /// </summary>
    internal static string? RootFileProblem(string file, string example = "404.html")
        => file.Length == 0 || file.StartsWith('/') || file.Contains('\\') || file.Split('/').Any(s => s is "" or "." or "..")
            ? $"'{file}' must be a file under the root, such as '{example}'."
            : null;

    /// <summary>A default document is a file name in the folder asked for, not a path.</summary>
    internal static string? DefaultDocumentProblem(string? document)
        => string.IsNullOrEmpty(document) || document.AsSpan().IndexOfAny('/', '\\') >= 0
            ? $"'{document}' must be a plain file name."
            : null;

    private static void Add(List<string> errors, string name, string? problem)
    {
        if (problem is not null)
        {
            errors.Add($"{name}: {problem}");
        }
    }

    // Framing and representation headers that each response computes; a fixed value would
    // break the response (RFC 9110 §8, RFC 9112 §6).
    private static readonly HashSet<string> s_reservedHeaders = new(StringComparer.OrdinalIgnoreCase)
    {
        "Content-Length", "Content-Type", "Content-Encoding", "Content-Range", "Transfer-Encoding",
        "Connection", "Keep-Alive", "Upgrade", "Trailer", "ETag", "Last-Modified", "Vary", "Date",
        "Accept-Ranges", "Location", "Allow",
    };

    private static bool IsTokenChar(char c)
        => char.IsAsciiLetterOrDigit(c) || "!#$%&'*+-.^_`|~".Contains(c);
}
