using Peregrine.Sources.Bucket;

namespace Peregrine.Server.Configuration;

/// <summary>The checks of an s3:// ROOT and the options that go with it, under the flags' names, with the library's rules.</summary>
internal static class BucketSettings
{
    private static readonly OptionSpec[] s_options =
        [OptionTable.BucketPointer, OptionTable.BucketPoll, OptionTable.BucketNotify, OptionTable.BucketCache, OptionTable.BucketPathStyle];

    /// <summary>A bucket option set while ROOT is a folder, where it would do nothing; null when none is.</summary>
    public static OptionSpec? FirstGiven(ServerSettings settings)
        => s_options.FirstOrDefault(option => settings.Sources.ContainsKey(option.Key));

    public static void Check(ServerSettings settings, IReadOnlyDictionary<string, string> environment, List<string> errors)
    {
        if (BucketOptionsRules.UriProblem(settings.Root) is { } uri)
        {
            errors.Add($"{settings.Describe(OptionTable.Root)}: {uri}");
        }
        else if (BucketClient.SetupProblem(new BucketOptions { Uri = settings.Root }, name => environment.GetValueOrDefault(name)) is { } setup)
        {
            errors.Add($"{settings.Describe(OptionTable.Root)}: {setup}");
        }

        if (settings.BucketPointer is { } pointer && BucketOptionsRules.PointerProblem(pointer) is { } pointerProblem)
        {
            errors.Add($"{settings.Describe(OptionTable.BucketPointer)}: {pointerProblem}");
        }

        if (settings.BucketNotify is { } path && (path.Length < 2 || path[0] != '/' || path.Contains('?') || path.Contains('#') || path.Any(char.IsWhiteSpace)))
        {
            errors.Add($"{settings.Describe(OptionTable.BucketNotify)}: '{path}' must be a path such as /_peregrine/bucket-events.");
        }

        if (settings.BucketCache is { } cache && Compression.CompressionOptionsValidator.CacheDirectoryProblem(cache) is { } cacheProblem)
        {
            errors.Add($"{settings.Describe(OptionTable.BucketCache)}: {cacheProblem}");
        }
    }
}
