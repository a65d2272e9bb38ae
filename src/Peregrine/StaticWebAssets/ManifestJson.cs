using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;

// The two manifests the .NET SDK writes for static web assets, as JSON models read through
// System.Text.Json source generation (ManifestJsonContext): no reflection, so the library stays
// trimmable and Native AOT-compatible. Only the fields Peregrine reads are modelled; the rest
// of each document is skipped.

namespace Peregrine.StaticWebAssets;

/// <summary>
/// <c>&lt;App&gt;.staticwebassets.runtime.json</c>, written by <c>dotnet build</c> beside the
/// application's assembly: the content roots of the application, of each class library and
/// package, and of the build's own outputs (scoped CSS bundles, compressed copies), and a tree of
/// URL segments that says which root serves which path. ASP.NET Core reads it in Development
/// (<c>StaticWebAssetsLoader</c>); a published application has no such file.
/// </summary>
internal sealed class RuntimeManifestDocument
{
    /// <summary>Absolute folders, each ending in a separator; nodes name them by index.</summary>
    public List<string>? ContentRoots { get; set; }

    /// <summary>The node of the URL root.</summary>
    public RuntimeManifestNode? Root { get; set; }
}

/// <summary>One URL segment of the runtime manifest's tree.</summary>
internal sealed class RuntimeManifestNode
{
    /// <summary>The segments under this one, by name as it appears in the URL.</summary>
    public Dictionary<string, RuntimeManifestNode>? Children { get; set; }

    /// <summary>For a file: the content root and the path under it that serve this URL.</summary>
    public RuntimeManifestAsset? Asset { get; set; }

    /// <summary>Content roots whose matching files are served under this node's path (<c>**</c>: all of them).</summary>
    public List<RuntimeManifestPattern>? Patterns { get; set; }
}

internal sealed class RuntimeManifestAsset
{
    public int ContentRootIndex { get; set; }

    /// <summary>The file's path under its content root, with forward slashes; its name may differ from the URL's last segment.</summary>
    public string? SubPath { get; set; }
}

internal sealed class RuntimeManifestPattern
{
    public int ContentRootIndex { get; set; }

    /// <summary>A glob over paths under the content root; the SDK writes <c>**</c>.</summary>
    public string? Pattern { get; set; }

    /// <summary>The depth of the node in the tree (informational).</summary>
    public int Depth { get; set; }
}

/// <summary>
/// <c>&lt;App&gt;.staticwebassets.endpoints.json</c>: what <c>MapStaticAssets</c> maps. Written
/// by <c>dotnet build</c> (<c>ManifestType</c> <c>Build</c>, asset paths resolved through the
/// runtime manifest) and by <c>dotnet publish</c> (<c>Publish</c>, asset paths under the
/// published web root). Each endpoint is one representation of one route: the identity bytes,
/// or an encoding chosen by a <c>Content-Encoding</c> selector.
/// </summary>
internal sealed class EndpointsManifestDocument
{
    public int Version { get; set; }

    /// <summary><c>Build</c> or <c>Publish</c>.</summary>
    public string? ManifestType { get; set; }

    public List<EndpointsManifestEndpoint>? Endpoints { get; set; }
}

internal sealed class EndpointsManifestEndpoint
{
    /// <summary>The URL path, without its leading slash: <c>app.khy4lop6wu.css</c>.</summary>
    public string? Route { get; set; }

    /// <summary>The file answered, as a path under the web root: <c>app.css</c>, <c>app.css.gz</c>.</summary>
    public string? AssetFile { get; set; }

    /// <summary>Request conditions that choose this endpoint among the route's: <c>Content-Encoding: gzip</c>.</summary>
    public List<EndpointsManifestSelector>? Selectors { get; set; }

    public List<EndpointsManifestPair>? ResponseHeaders { get; set; }

    /// <summary><c>fingerprint</c>, <c>integrity</c>, <c>label</c>, <c>original-resource</c>, <c>script-type</c>.</summary>
    public List<EndpointsManifestPair>? EndpointProperties { get; set; }
}

internal sealed class EndpointsManifestSelector
{
    public string? Name { get; set; }

    public string? Value { get; set; }

    /// <summary>A number written as a string (<c>"0.000636"</c>): the endpoint's weight among the route's.</summary>
    public string? Quality { get; set; }
}

internal sealed class EndpointsManifestPair
{
    public string? Name { get; set; }

    public string? Value { get; set; }
}

[JsonSourceGenerationOptions(PropertyNameCaseInsensitive = true, ReadCommentHandling = System.Text.Json.JsonCommentHandling.Skip, AllowTrailingCommas = true)]
[JsonSerializable(typeof(RuntimeManifestDocument))]
[JsonSerializable(typeof(EndpointsManifestDocument))]
internal sealed partial class ManifestJsonContext : JsonSerializerContext;

/// <summary>How both manifests are read: one document of the source-generated model, its failure an <see cref="InvalidDataException"/> that names the file.</summary>
internal static class ManifestReader
{
    /// <summary>The document in <paramref name="json"/>; null for a document that is JSON's <c>null</c>.</summary>
    /// <param name="json">The file's bytes.</param>
    /// <param name="model">The source-generated model of the document (<see cref="ManifestJsonContext"/>).</param>
    /// <param name="kind">What the file is, for the message ("static assets manifest").</param>
    /// <param name="source">The file's path, for the message.</param>
    public static T? Read<T>(Stream json, JsonTypeInfo<T> model, string kind, string source)
        where T : class
    {
        try
        {
            return JsonSerializer.Deserialize(json, model);
        }
        catch (JsonException ex)
        {
            throw new InvalidDataException($"The {kind} '{source}' is not valid JSON: {ex.Message}", ex);
        }
    }
}
