using System.Globalization;

namespace Peregrine.StaticWebAssets;

/// <summary>
/// One route of the endpoints manifest, as its identity endpoint states it (the endpoint that no
/// selector chooses): the file it answers with and the response header fields the manifest
/// gives it.
/// </summary>
/// <param name="Path">The URL path, leading slash: <c>/app.khy4lop6wu.css</c>.</param>
/// <param name="AssetPath">The file, as a path under the web root, leading slash: <c>/app.css</c>.</param>
/// <param name="Headers">The response header fields as stated, in order (Content-Length, ETag and Last-Modified included).</param>
/// <param name="Properties">The endpoint properties: <c>fingerprint</c>, <c>integrity</c>, <c>label</c>, <c>script-type</c>.</param>
/// <param name="Encodings">Encodings the route also answers with, from its selector endpoints: <c>gzip</c> from <c>/app.css.gz</c>.</param>
internal sealed record AssetRoute(
    string Path,
    string AssetPath,
    IReadOnlyList<KeyValuePair<string, string>> Headers,
    IReadOnlyDictionary<string, string> Properties,
    IReadOnlyList<AssetEncoding> Encodings)
{
    /// <summary>The Cache-Control the manifest states, or <see langword="null"/>.</summary>
    public string? CacheControl => Header("Cache-Control");

    /// <summary>The value of the first field named <paramref name="name"/> (case-insensitive), or <see langword="null"/>.</summary>
    public string? Header(string name)
    {
        foreach (var (key, value) in Headers)
        {
            if (string.Equals(key, name, StringComparison.OrdinalIgnoreCase))
            {
                return value;
            }
        }

        return null;
    }

    /// <summary>True for a route whose identity answer is itself encoded (<c>/app.css.gz</c>): a sidecar named as a URL.</summary>
    public bool IsEncodedFile => Header("Content-Encoding") is not null;

    /// <summary>The ETag the manifest states for the route's <paramref name="coding"/> (<c>br</c>, <c>gzip</c>), or <see langword="null"/>.</summary>
    public string? EncodedETag(string coding)
    {
        foreach (var encoding in Encodings)
        {
            if (string.Equals(encoding.Coding, coding, StringComparison.OrdinalIgnoreCase))
            {
                return encoding.ETag;
            }
        }

        return null;
    }
}

/// <summary>
/// An encoded file the manifest offers for a route: <c>Content-Encoding: gzip</c> from
/// <c>/app.css.gz</c>, with the ETag its selector endpoint states (the SHA-256 of that file)
/// and the selector's <c>Quality</c>: the server's preference among the route's encodings,
/// which MapStaticAssets uses to break a tie between codings the client weighs alike (the SDK
/// writes 1 / (length + 1), so the smaller file wins).
/// </summary>
internal readonly record struct AssetEncoding(string Coding, string AssetPath, string? ETag = null, double Quality = 0);

/// <summary>
/// The endpoints manifest read as routes (see <see cref="EndpointsManifestDocument"/>): one
/// <see cref="AssetRoute"/> per route, in the manifest's order.
/// </summary>
internal sealed class EndpointsManifest
{
    private EndpointsManifest(bool isBuild, List<AssetRoute> routes)
    {
        IsBuild = isBuild;
        Routes = routes;
    }

    /// <summary>
    /// True for the manifest <c>dotnet build</c> writes (its asset paths resolve through the
    /// runtime manifest); false for the one <c>dotnet publish</c> writes.
    /// </summary>
    public bool IsBuild { get; }

    public IReadOnlyList<AssetRoute> Routes { get; }

    public static EndpointsManifest Load(string path)
    {
        using var stream = File.OpenRead(path);
        return Parse(stream, path);
    }

    public static EndpointsManifest Parse(Stream json, string source)
    {
        var document = ManifestReader.Read(json, ManifestJsonContext.Default.EndpointsManifestDocument, "static assets manifest", source);

        if (document?.Endpoints is not { } endpoints)
        {
            throw new InvalidDataException($"The static assets manifest '{source}' has no Endpoints.");
        }

        // Each route's endpoints, in the order the route is first met.
        var order = new List<string>();
        var identities = new Dictionary<string, EndpointsManifestEndpoint>(StringComparer.Ordinal);
        var encodings = new Dictionary<string, List<AssetEncoding>>(StringComparer.Ordinal);
        foreach (var endpoint in endpoints)
        {
            if (endpoint.Route is not { Length: > 0 } route || endpoint.AssetFile is not { Length: > 0 } asset)
            {
                throw new InvalidDataException($"The static assets manifest '{source}' has an endpoint without a Route or an AssetFile.");
            }

            var path = Rooted(route, source);
            if (!identities.ContainsKey(path) && !encodings.ContainsKey(path))
            {
                order.Add(path);
            }

            var selectors = endpoint.Selectors ?? [];
            if (selectors.Count == 0)
            {
                identities.TryAdd(path, endpoint);
            }
            else if (selectors.Count == 1 && string.Equals(selectors[0].Name, "Content-Encoding", StringComparison.OrdinalIgnoreCase) && selectors[0].Value is { Length: > 0 } coding
                && double.TryParse(selectors[0].Quality, NumberStyles.Float, CultureInfo.InvariantCulture, out var quality) && double.IsFinite(quality))
            {
                if (!encodings.TryGetValue(path, out var list))
                {
                    encodings[path] = list = [];
                }

                list.Add(new AssetEncoding(coding, Rooted(asset, source), StatedETag(endpoint), quality));
            }

            // Any other selector (none is written today) chooses by something Peregrine does
            // not negotiate, and one without a readable Quality is one MapStaticAssets fails to
            // start on: the route is served without it.
        }

        var routes = new List<AssetRoute>(order.Count);
        foreach (var path in order)
        {
            if (!identities.TryGetValue(path, out var identity))
            {
                // Only encoded answers: a client that accepts none of them gets 406 from
                // MapStaticAssets' negotiation. Peregrine has no identity bytes to index.
                continue;
            }

            var headers = (identity.ResponseHeaders ?? [])
                .Where(h => h.Name is { Length: > 0 } && h.Value is not null)
                .Select(h => KeyValuePair.Create(h.Name!, h.Value!))
                .ToList();
            var properties = new Dictionary<string, string>(StringComparer.OrdinalIgnoreCase);
            foreach (var property in identity.EndpointProperties ?? [])
            {
                if (property.Name is { Length: > 0 } name && property.Value is { } value)
                {
                    properties.TryAdd(name, value);
                }
            }

            routes.Add(new AssetRoute(path, Rooted(identity.AssetFile!, source), headers, properties, encodings.GetValueOrDefault(path) ?? []));
        }

        return new EndpointsManifest(string.Equals(document.ManifestType, "Build", StringComparison.OrdinalIgnoreCase), routes);
    }

    private static string? StatedETag(EndpointsManifestEndpoint endpoint)
    {
        foreach (var header in endpoint.ResponseHeaders ?? [])
        {
            if (string.Equals(header.Name, "ETag", StringComparison.OrdinalIgnoreCase) && header.Value is { Length: > 0 } value)
            {
                return value;
            }
        }

        return null;
    }

    /// <summary>A manifest path as an index key: leading slash, forward slashes, no empty, <c>.</c> or <c>..</c> segment.</summary>
    private static string Rooted(string path, string source)
    {
        var rooted = "/" + path.Replace('\\', '/').TrimStart('/');
        foreach (var segment in rooted[1..].Split('/'))
        {
            if (segment is "" or "." or "..")
            {
                throw new InvalidDataException($"The static assets manifest '{source}' names '{path}', which is not a plain path.");
            }
        }

        return rooted;
    }
}
