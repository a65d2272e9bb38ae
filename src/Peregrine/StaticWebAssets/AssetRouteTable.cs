namespace Peregrine.StaticWebAssets;

/// <summary>A path the index answers with another path's file: a fingerprinted route, or a file's URL name where it differs from its name on disk.</summary>
/// <param name="Path">The URL path (leading slash): <c>/app.khy4lop6wu.css</c>.</param>
/// <param name="Target">The path the file is indexed under: <c>/app.css</c>.</param>
/// <param name="Stated">The header fields the manifest states for the route; <see langword="null"/> keeps the file's own.</param>
internal readonly record struct RouteAlias(string Path, string Target, StatedHeaders? Stated)
{
    /// <summary>The Cache-Control it carries; <see langword="null"/> keeps the file's own.</summary>
    public string? CacheControl => Stated?.CacheControl;
}

/// <summary>
/// What the manifests add to an index, decided once when the host starts: the aliases (paths
/// that answer with another path's bytes and variants, under the header fields their route
/// states), and the header fields the endpoints manifest states for files served under their
/// own path (<see cref="StatedHeaders"/>). The
/// index applies it after its files are built, and again for the aliases of each file that
/// changes.
/// </summary>
internal sealed class AssetRouteTable
{
    private readonly Dictionary<string, StatedHeaders> _stated;
    private readonly Dictionary<string, List<RouteAlias>> _byTarget;
    private readonly HashSet<string> _variantOnly;
    private readonly Dictionary<string, IReadOnlyList<StatedEncoding>> _encodings;

    private AssetRouteTable(List<RouteAlias> aliases, Dictionary<string, StatedHeaders> stated, HashSet<string> variantOnly, Dictionary<string, IReadOnlyList<StatedEncoding>> encodings)
    {
        Aliases = aliases;
        _stated = stated;
        _variantOnly = variantOnly;
        _encodings = encodings;
        _byTarget = new Dictionary<string, List<RouteAlias>>(StringComparer.Ordinal);
        foreach (var alias in aliases)
        {
            if (!_byTarget.TryGetValue(alias.Target, out var list))
            {
                _byTarget[alias.Target] = list = [];
            }

            list.Add(alias);
        }
    }

    public static AssetRouteTable Empty { get; } = new([], new(StringComparer.Ordinal), new(StringComparer.Ordinal), new(StringComparer.Ordinal));

    /// <summary>Every alias, in the manifests' order.</summary>
    public IReadOnlyList<RouteAlias> Aliases { get; }

    /// <summary>True when there is nothing to add.</summary>
    public bool IsEmpty => Aliases.Count == 0 && _stated.Count == 0 && _variantOnly.Count == 0 && _encodings.Count == 0;

    /// <summary>
    /// True for a file the manifest names as an encoding of another (<c>/app.css.br</c>), when
    /// such files are not served as URLs: the index leaves it out, and compression still reads it
    /// as the file's variant (a sidecar).
    /// </summary>
    public bool IsVariantOnly(string path) => _variantOnly.Contains(path);

    /// <summary>The Cache-Control the manifest states for the file at <paramref name="path"/> under its own path, or <see langword="null"/>.</summary>
    public string? CacheControlFor(string path) => _stated.GetValueOrDefault(path)?.CacheControl;

    /// <summary>The header fields the manifest states for the file at <paramref name="path"/> under its own path, or <see langword="null"/>.</summary>
    public StatedHeaders? StatedFor(string path) => _stated.GetValueOrDefault(path);

    /// <summary>
    /// The encoded representations the manifest states for the file at <paramref name="target"/>
    /// (from its own route, or else from the first route that answers with it): the files
    /// compression serves for it instead of its own variants while each still decodes to the
    /// file. <see langword="null"/> when no route states any.
    /// </summary>
    public IReadOnlyList<StatedEncoding>? EncodingsFor(string target) => _encodings.GetValueOrDefault(target);

    /// <summary>The aliases that answer with the file at <paramref name="target"/>; empty for most files.</summary>
    public IReadOnlyList<RouteAlias> AliasesOf(string target)
        => _byTarget.TryGetValue(target, out var list) ? list : [];

    /// <summary>
    /// The table for <paramref name="endpoints"/> (either manifest may be missing) and the
    /// <paramref name="renames"/> of the runtime manifest.
    /// </summary>
    /// <param name="endpoints">The endpoints manifest, or <see langword="null"/>.</param>
    /// <param name="renames">URL names that differ from the file's name on disk (runtime manifest).</param>
    /// <param name="manifestCaching">
    /// Whether the manifest's Cache-Control is sent as stated. MapStaticAssets replaces it with
    /// <c>no-cache</c> on every route of a build manifest (a file edited after the build keeps
    /// its fingerprinted URL, which must not stay cached for a year), unless the configuration
    /// says <c>EnableStaticAssetsDevelopmentCaching</c>; the caller decides the same way.
    /// </param>
    /// <param name="serveEncodedFiles">
    /// Whether routes whose answer is itself an encoded file (<c>/app.css.gz</c>) are served as
    /// URLs. They are encodings of the file beside them, which Peregrine offers through
    /// Accept-Encoding; MapStaticAssets also maps them as routes.
    /// </param>
    /// <param name="encodedFile">
    /// Where the file an encoded representation names (<c>/app.css.gz</c>) lies, absolute, or
    /// <see langword="null"/> when the host has no such file; without it, none is found and
    /// Peregrine's own variants are served.
    /// </param>
    public static AssetRouteTable Create(EndpointsManifest? endpoints, IReadOnlyList<AssetRename> renames, bool manifestCaching, bool serveEncodedFiles, Func<string, string?>? encodedFile = null)
    {
        encodedFile ??= static _ => null;
        var renamed = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var rename in renames)
        {
            renamed.TryAdd(rename.Path, rename.Target);
        }

        var aliases = new List<RouteAlias>();
        var aliased = new HashSet<string>(StringComparer.Ordinal);
        var stated = new Dictionary<string, StatedHeaders>(StringComparer.Ordinal);
        var variantOnly = new HashSet<string>(StringComparer.Ordinal);
        var encodings = new Dictionary<string, IReadOnlyList<StatedEncoding>>(StringComparer.Ordinal);
        foreach (var route in endpoints?.Routes ?? [])
        {
            if (route.IsEncodedFile && !serveEncodedFiles)
            {
                variantOnly.Add(renamed.GetValueOrDefault(route.AssetPath) ?? route.AssetPath);
                continue;
            }

            var target = renamed.GetValueOrDefault(route.AssetPath) ?? route.AssetPath;
            var cacheControl = route.CacheControl is not { } value ? null : manifestCaching ? value : "no-cache";
            var headers = StatedHeaders.For(route, cacheControl, encodedFile);
            if (headers.Encodings.Count > 0)
            {
                // A file's own route comes first where it has one: the manifest lists a file's
                // own route before its fingerprinted one, and both name the same encoded files.
                if (string.Equals(route.Path, target, StringComparison.Ordinal))
                {
                    encodings[target] = headers.Encodings;
                }
                else
                {
                    encodings.TryAdd(target, headers.Encodings);
                }
            }

            if (string.Equals(route.Path, target, StringComparison.Ordinal))
            {
                stated.TryAdd(route.Path, headers);
            }
            else if (aliased.Add(route.Path))
            {
                aliases.Add(new RouteAlias(route.Path, target, headers));
            }
        }

        // A renamed file that no route names (no endpoints manifest, or an older SDK's) is still
        // found under its URL name, with the file's own Cache-Control.
        foreach (var rename in renames)
        {
            if (aliased.Add(rename.Path))
            {
                aliases.Add(new RouteAlias(rename.Path, rename.Target, null));
            }
        }

        // An encoded file that some route still answers with as itself stays (none does today).
        variantOnly.ExceptWith(aliases.Select(a => a.Target));
        variantOnly.ExceptWith(stated.Keys);
        return new AssetRouteTable(aliases, stated, variantOnly, encodings);
    }
}
