using Microsoft.Extensions.FileSystemGlobbing;

namespace Peregrine.Indexing;

/// <summary>
/// The Cache-Control of each file, decided once at index time: the first matching
/// <see cref="PeregrineOptions.CacheRules"/> glob, else the fingerprint rule, else the default.
/// </summary>
internal sealed class CachePolicy
{
    private readonly (Matcher Matcher, string Value)[] _rules;
    private readonly PeregrineOptions _options;

    public CachePolicy(PeregrineOptions options)
    {
        _options = options;
        _rules = options.CacheRules.Select(rule =>
        {
            // A glob with no slash names files anywhere, as in .gitignore: "*.html" is "**/*.html".
            var glob = rule.Glob.TrimStart('/');
            if (!glob.Contains('/'))
            {
                glob = "**/" + glob;
            }

            var matcher = new Matcher(StringComparison.Ordinal);
            matcher.AddInclude(glob);
            return (matcher, rule.CacheControl);
        }).ToArray();
    }

    /// <param name="relativePath">The path under the root, with its leading slash.</param>
    /// <param name="fileName">The last segment of the path.</param>
    public string For(string relativePath, string fileName)
    {
        foreach (var (matcher, value) in _rules)
        {
            if (matcher.Match(relativePath[1..]).HasMatches)
            {
                return value;
            }
        }

        return _options.FingerprintedNames && Fingerprint.IsFingerprinted(fileName)
            ? _options.FingerprintedCacheControl
            : _options.CacheControl;
    }
}
