namespace Peregrine.StaticWebAssets;

/// <summary>A path the index answers with another path's file: a fingerprinted route, or a file's URL name where it differs from its name on disk.</summary>
/// <param name="Path">The URL path (leading slash): <c>/app.khy4lop6wu.css</c>.</param>
/// <param name="Target">The path the file is indexed under: <c>/app.css</c>.</param>
/// <param name="Stated">The header fields the manifest states for the route; <see langword="null"/> keeps the file's own.</param>
/// <param name="Fingerprint">
/// The fingerprint the manifest states for the route (its <c>fingerprint</c> property), when it
/// answers with the file's identity bytes: the token in <paramref name="Path"/> that changes with
/// each build. <see langword="null"/> for any other route.
/// </param>
internal readonly record struct RouteAlias(string Path, string Target, StatedHeaders? Stated, string? Fingerprint = null)
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
/// changes. Every route is served, those whose answer is itself an encoded file
/// (<c>/app.css.br</c>, <c>/_framework/dotnet.wasm.gz</c>) included: MapStaticAssets maps them as
/// endpoints, and answers each with the stored bytes under <c>Content-Encoding</c>, whatever the
/// request accepts (<see cref="StatedHeaders.ContentEncoding"/>).
/// </summary>
internal sealed class AssetRouteTable
{
    private readonly Dictionary<string, StatedHeaders> _stated;
    private readonly Dictionary<string, List<RouteAlias>> _byTarget;
    private readonly Dictionary<string, IReadOnlyList<StatedEncoding>> _encodings;
    private readonly Dictionary<string, RouteAlias> _fingerprinted;

    /// <summary>Each route's path by itself case-folded (see <see cref="TryFindRoute"/>); looked up with a span, so a request allocates nothing.</summary>
    private readonly Dictionary<string, string>.AlternateLookup<ReadOnlySpan<char>> _routesIgnoringCase;

    private AssetRouteTable(List<RouteAlias> aliases, Dictionary<string, StatedHeaders> stated, Dictionary<string, IReadOnlyList<StatedEncoding>> encodings, Dictionary<string, string> routesIgnoringCase, List<RouteAlias>? ownFingerprinted = null)
    {
        Aliases = aliases;
        _stated = stated;
        _encodings = encodings;
        _routesIgnoringCase = routesIgnoringCase.GetAlternateLookup<ReadOnlySpan<char>>();
        _byTarget = new Dictionary<string, List<RouteAlias>>(StringComparer.Ordinal);
        _fingerprinted = new Dictionary<string, RouteAlias>(StringComparer.Ordinal);
        foreach (var alias in aliases)
        {
            if (alias.Fingerprint is not null)
            {
                _fingerprinted.TryAdd(alias.Target, alias);
            }

            if (!_byTarget.TryGetValue(alias.Target, out var list))
            {
                _byTarget[alias.Target] = list = [];
            }

            list.Add(alias);
        }

        foreach (var own in ownFingerprinted ?? [])
        {
            _fingerprinted.TryAdd(own.Target, own);
        }
    }

    public static AssetRouteTable Empty { get; } = new([], new(StringComparer.Ordinal), new(StringComparer.Ordinal), new(StringComparer.OrdinalIgnoreCase));

    /// <summary>Every alias, in the manifests' order.</summary>
    public IReadOnlyList<RouteAlias> Aliases { get; }

    /// <summary>True when there is nothing to add.</summary>
    public bool IsEmpty => Aliases.Count == 0 && _stated.Count == 0 && _encodings.Count == 0;

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

    /// <summary>
    /// The route of the endpoints manifest that <paramref name="path"/> names when case is
    /// ignored: <c>/css/site.css</c> for <c>/CSS/Site.css</c>. MapStaticAssets maps each route
    /// as an endpoint, and endpoint routing matches literal segments ignoring case (ordinal,
    /// as <see cref="StringComparer.OrdinalIgnoreCase"/>), so stock answers <c>/CSS/Site.css</c>
    /// as <c>/css/site.css</c>, with the same fields. The caller looks the route up in the
    /// index: one entry, one set of representations and tags, whatever case the request used.
    /// Paths the manifest does not name keep the index's exact, case-sensitive match.
    /// </summary>
    public bool TryFindRoute(ReadOnlySpan<char> path, [System.Diagnostics.CodeAnalysis.MaybeNullWhen(false)] out string route)
        => _routesIgnoringCase.TryGetValue(path, out route);

    /// <summary>
    /// The first route the manifest says is fingerprinted that answers with the file at
    /// <paramref name="target"/> (<see cref="RouteAlias.Fingerprint"/>), or <see langword="null"/>.
    /// The index keeps the file's versions under that route's <c>Use-As-Dictionary</c> pattern,
    /// and only that route announces it (<see cref="IsFingerprintedRouteOf"/>). Where the file's
    /// name on disk carries the fingerprint (.NET 10's <c>_framework/*.wasm</c>,
    /// <c>dotnet.native.*.js</c>), that route is the file's own path (its
    /// <see cref="RouteAlias.Path"/> equals <paramref name="target"/>), and the file's entry announces it.
    /// </summary>
    public RouteAlias? FingerprintedRouteOf(string target) => _fingerprinted.TryGetValue(target, out var alias) ? alias : null;

    /// <summary>True when <paramref name="alias"/> is its file's <see cref="FingerprintedRouteOf"/>.</summary>
    public bool IsFingerprintedRouteOf(RouteAlias alias)
        => alias.Fingerprint is not null && FingerprintedRouteOf(alias.Target) is { } first && string.Equals(first.Path, alias.Path, StringComparison.Ordinal);

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
    /// <param name="encodedFile">
    /// Where the file an encoded representation names (<c>/app.css.gz</c>) lies, absolute, or
    /// <see langword="null"/> when the host has no such file; without it, none is found and
    /// Peregrine's own variants are served.
    /// </param>
    public static AssetRouteTable Create(EndpointsManifest? endpoints, IReadOnlyList<AssetRename> renames, bool manifestCaching, Func<string, string?>? encodedFile = null)
    {
        encodedFile ??= static _ => null;
        var renamed = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var rename in renames)
        {
            renamed.TryAdd(rename.Path, rename.Target);
        }

        var aliases = new List<RouteAlias>();
        var ownFingerprinted = new List<RouteAlias>();
        var aliased = new HashSet<string>(StringComparer.Ordinal);
        var stated = new Dictionary<string, StatedHeaders>(StringComparer.Ordinal);
        var encodings = new Dictionary<string, IReadOnlyList<StatedEncoding>>(StringComparer.Ordinal);
        var routesIgnoringCase = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
        foreach (var route in endpoints?.Routes ?? [])
        {
            // Where two routes differ only in case (the SDK writes none), the first is taken;
            // a request that names either exactly still finds its own.
            routesIgnoringCase.TryAdd(route.Path, route.Path);
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

                // The file's name on disk is its fingerprinted route (/_framework/app.khy4lop6wu.wasm):
                // it is offered as the dictionary for its later builds under its own path.
                if (!headers.IsEncodedFile && route.Properties.TryGetValue("fingerprint", out var own) && own.Length > 0)
                {
                    ownFingerprinted.Add(new RouteAlias(route.Path, target, headers, own));
                }
            }
            else if (aliased.Add(route.Path))
            {
                // RFC 9842: a route the manifest says is fingerprinted is offered as the
                // dictionary for its file's later builds; not a route that answers with an
                // encoded file (/app.khy4lop6wu.css.br), whose bytes are sent as they are.
                var fingerprint = !headers.IsEncodedFile && route.Properties.TryGetValue("fingerprint", out var token) && token.Length > 0 ? token : null;
                aliases.Add(new RouteAlias(route.Path, target, headers, fingerprint));
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

        return new AssetRouteTable(aliases, stated, encodings, routesIgnoringCase, ownFingerprinted);
    }
}
