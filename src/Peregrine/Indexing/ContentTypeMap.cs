using Microsoft.AspNetCore.StaticFiles;

namespace Peregrine.Indexing;

/// <summary>
/// Content types by extension: ASP.NET Core's <see cref="FileExtensionContentTypeProvider"/>
/// with the user's overrides on top, and <c>charset=utf-8</c> on text types so that browsers
/// never have to sniff the encoding. Built once per catalog.
/// </summary>
internal sealed class ContentTypeMap
{
    // Types that are text although their top-level type is not text/ (RFC 6838 §4.2.1 leaves
    // charset to each type; these are the ones browsers decode as text).
    private static readonly HashSet<string> s_textLike = new(StringComparer.OrdinalIgnoreCase)
    {
        "application/javascript",
        "application/json",
        "application/ld+json",
        "application/manifest+json",
        "application/xml",
        "application/xhtml+xml",
        "application/rss+xml",
        "application/atom+xml",
        "image/svg+xml",
    };

    private readonly FileExtensionContentTypeProvider _provider = new();
    private readonly Dictionary<string, string> _withCharset = new(StringComparer.Ordinal);
    private readonly string? _default;

    public ContentTypeMap(PeregrineOptions options)
    {
        // Types the framework's table lacks or dates; user overrides still win below.
        _provider.Mappings[".mjs"] = "text/javascript";
        _provider.Mappings[".webmanifest"] = "application/manifest+json";
        _provider.Mappings[".avif"] = "image/avif";
        _provider.Mappings[".wasm"] = "application/wasm";
        foreach (var (extension, type) in options.ContentTypes)
        {
            _provider.Mappings[extension] = type;
        }

        _default = options.ServeUnknownFileTypes ? WithCharset(options.DefaultContentType) : null;
    }

    /// <summary>The Content-Type for a file name, or <see langword="null"/> when the file is not to be served.</summary>
    public string? For(string fileName)
    {
        return _provider.TryGetContentType(fileName, out var type) ? Cached(type) : _default;
    }

    private string Cached(string type)
    {
        // One string instance per type across the catalog: entries share it.
        lock (_withCharset)
        {
            if (!_withCharset.TryGetValue(type, out var value))
            {
                value = WithCharset(type);
                _withCharset[type] = value;
            }

            return value;
        }
    }

    internal static bool IsText(string type)
    {
        var bare = type.AsSpan();
        var semicolon = bare.IndexOf(';');
        if (semicolon >= 0)
        {
            bare = bare[..semicolon].Trim();
        }

        return bare.StartsWith("text/", StringComparison.OrdinalIgnoreCase)
            || s_textLike.GetAlternateLookup<ReadOnlySpan<char>>().Contains(bare);
    }

    private static string WithCharset(string type)
    {
        if (!IsText(type) || type.Contains("charset=", StringComparison.OrdinalIgnoreCase))
        {
            return type;
        }

        return type + "; charset=utf-8";
    }
}
