using Microsoft.Extensions.Options;

namespace Peregrine;

/// <summary>
/// Validates <see cref="PeregrineOptions"/> once, at start-up, collecting every error so that
/// one run shows all of them. Each message names the option.
/// </summary>
internal sealed class PeregrineOptionsValidator : IValidateOptions<PeregrineOptions>
{
    public ValidateOptionsResult Validate(string? name, PeregrineOptions options)
    {
        var errors = Collect(options);
        return errors.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(errors);
    }

    internal static List<string> Collect(PeregrineOptions options)
    {
        var errors = new List<string>();
        if (string.IsNullOrWhiteSpace(options.Root))
        {
            errors.Add("Root: a folder to serve is required.");
        }
        else if (!Directory.Exists(options.Root))
        {
            errors.Add($"Root: '{options.Root}' does not exist or is not a folder.");
        }

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
                if (string.IsNullOrEmpty(document) || document.AsSpan().IndexOfAny('/', '\\') >= 0)
                {
                    errors.Add($"DefaultDocuments: '{document}' must be a plain file name.");
                }
            }
        }

        if (options.ServeUnknownFileTypes)
        {
            CheckHeaderValue(errors, nameof(options.DefaultContentType), options.DefaultContentType, required: true);
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

                CheckHeaderValue(errors, $"ContentTypes[{extension}]", type, required: true);
            }
        }

        CheckHeaderValue(errors, nameof(options.CacheControl), options.CacheControl, required: false);
        CheckHeaderValue(errors, nameof(options.FingerprintedCacheControl), options.FingerprintedCacheControl, required: false);

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

            CheckHeaderValue(errors, $"CacheRules[{rule.Glob}]", rule.CacheControl, required: false);
        }

        foreach (var (name, value) in options.Headers ?? new Dictionary<string, string>())
        {
            if (string.IsNullOrEmpty(name) || !name.All(IsTokenChar))
            {
                errors.Add($"Headers: '{name}' is not a valid header name.");
                continue;
            }

            if (s_reservedHeaders.Contains(name))
            {
                errors.Add($"Headers: '{name}' is set by Peregrine for each response and cannot be configured.");
                continue;
            }

            CheckHeaderValue(errors, $"Headers[{name}]", value, required: true);
        }

        foreach (var origin in options.CorsOrigins ?? [])
        {
            if (origin != "*" && !(Uri.TryCreate(origin, UriKind.Absolute, out var uri)
                && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
                && uri.AbsolutePath == "/" && !origin.EndsWith('/')))
            {
                errors.Add($"CorsOrigins: '{origin}' must be '*' or an origin such as 'https://app.example.com' (scheme, host, optional port, no path).");
            }
        }

        if (options.SpaFallback is { } spa && (spa.Length == 0 || spa.StartsWith('/') || spa.Contains('\\') || spa.Split('/').Any(s => s is "" or "." or "..")))
        {
            errors.Add($"SpaFallback: '{spa}' must be a path under the root, such as 'index.html'.");
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
        }
        else
        {
            errors.Add("Watch: must be set.");
        }

        Compression.CompressionOptionsValidator.Collect(options.Compression, errors);
        return errors;
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

    private static void CheckHeaderValue(List<string> errors, string name, string? value, bool required)
    {
        if (value is null || (required && value.Length == 0))
        {
            errors.Add($"{name}: a value is required.");
            return;
        }

        // A header value may hold visible ASCII, spaces and tabs (RFC 9110 §5.5); anything else,
        // CR and LF above all, would let a configuration value split the response.
        foreach (var c in value)
        {
            if (c is not ('\t' or (>= ' ' and <= '~')))
            {
                errors.Add($"{name}: holds a character not allowed in a header value (U+{(int)c:X4}); only visible ASCII, space and tab are.");
                return;
            }
        }
    }
}
