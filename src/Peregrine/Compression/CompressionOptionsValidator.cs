using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>
/// The rules for <see cref="CompressionOptions"/>, added to the errors of the whole options so
/// that one start-up shows all of them. Each message starts with the option's name.
/// </summary>
internal static class CompressionOptionsValidator
{
    /// <summary>The largest <see cref="CompressionOptions.MaxFileSize"/>: a file is compressed from one array, and its compressed bound must fit one too.</summary>
    internal const long MaxFileSizeLimit = 1024L * 1024 * 1024;

    public static void Collect(CompressionOptions? options, List<string> errors)
    {
        if (options is null)
        {
            errors.Add("Compression: a value is required.");
            return;
        }

        CollectEncodings(options, errors);
        CollectCacheDirectory(options, errors);

        if (options.MaxParallelism < 0)
        {
            errors.Add($"Compression.MaxParallelism: {options.MaxParallelism} must be 0 (one fewer than the processor count) or more.");
        }

        if (options.MaxFileSize is <= 0 or > MaxFileSizeLimit)
        {
            errors.Add($"Compression.MaxFileSize: {options.MaxFileSize} must be between 1 and {MaxFileSizeLimit} (1 GiB).");
        }

        if (!Enum.IsDefined(options.ManifestEncodings))
        {
            errors.Add($"Compression.ManifestEncodings: {(int)options.ManifestEncodings} is not {nameof(ManifestEncodingPolicy.AsStated)} or {nameof(ManifestEncodingPolicy.PreferOwn)}.");
        }

        CollectDictionaries(options.Dictionaries, errors);
    }

    private static void CollectDictionaries(DictionaryOptions? options, List<string> errors)
    {
        if (options is null)
        {
            errors.Add("Compression.Dictionaries: a value is required.");
            return;
        }

        if (options.MaxVersions is < 2 or > 64)
        {
            errors.Add($"Compression.Dictionaries.MaxVersions: {options.MaxVersions} must be between 2 (the current version and one before it) and 64.");
        }

        if (options.MaxBytes <= 0)
        {
            errors.Add($"Compression.Dictionaries.MaxBytes: {options.MaxBytes} must be more than 0.");
        }
    }

    private static void CollectEncodings(CompressionOptions options, List<string> errors)
    {
        if (options.Encodings is null)
        {
            errors.Add("Compression.Encodings: must be a list (it may be empty).");
            return;
        }

        var seen = new List<ContentCoding>(3);
        foreach (var token in options.Encodings)
        {
            if (!Encoders.TryParse(token, out var coding))
            {
                errors.Add($"Compression.Encodings: '{token}' is not supported ({Encoders.SupportedTokens}).");
            }
            else if (seen.Contains(coding))
            {
                errors.Add($"Compression.Encodings: '{token}' is listed more than once.");
            }
            else
            {
                seen.Add(coding);
            }
        }
    }

    private static void CollectCacheDirectory(CompressionOptions options, List<string> errors)
    {
        if (options.CacheDirectory is not null && CacheDirectoryProblem(options.CacheDirectory) is { } problem)
        {
            errors.Add($"Compression.CacheDirectory: {problem}");
        }
    }

    /// <summary>
    /// The problem with a cache folder, or <see langword="null"/>. The folder is created now,
    /// and written to once, so that a read-only or misspelt location fails the start-up instead
    /// of silently costing a full compression on every restart. The standalone server checks
    /// its <c>--compression-cache</c> with this too.
    /// </summary>
    internal static string? CacheDirectoryProblem(string directory)
    {
        if (string.IsNullOrWhiteSpace(directory))
        {
            return "must be a folder path, or not set.";
        }

        if (File.Exists(directory))
        {
            return $"'{directory}' is a file, not a folder.";
        }

        try
        {
            Directory.CreateDirectory(directory);
            var probe = Path.Combine(directory, ".peregrine-write-test-" + Guid.NewGuid().ToString("N"));
            File.WriteAllBytes(probe, []);
            File.Delete(probe);
            return null;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            return $"'{directory}' cannot be created or written to ({ex.Message}).";
        }
    }
}
