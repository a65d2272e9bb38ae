using System.Text.Json;

namespace Peregrine.Sources;

/// <summary>
/// A source whose files live elsewhere and are copied into a folder of the process's own, which
/// the catalog then indexes as it indexes any root: a bucket, from the Peregrine.AspNetCore.Buckets
/// package. The core knows such a source by this alone, so that it references no store's client
/// (docs/architecture.md, "Packages").
/// </summary>
internal interface ICopiedSource : IDisposable
{
    /// <summary>The link the catalog is to serve; becomes the instance's root.</summary>
    string RootLink { get; }

    /// <summary>The Last-Modified the store lists for a file, becomes <see cref="PeregrineOptions.ListedLastModified"/>.</summary>
    Func<string, string, long?> ListedLastModified { get; }

    /// <summary>The earlier versions of a version folder's fingerprinted files, becomes <see cref="PeregrineOptions.EarlierVersions"/>.</summary>
    Func<string, IReadOnlyList<KeyValuePair<string, string>>?> EarlierVersions { get; }

    /// <summary>True once a whole release is in the copy: until then, requests are answered 503.</summary>
    bool HasSynced { get; }

    /// <summary>
    /// Starts copying. <paramref name="firstRelease"/> is called once the first release is copied
    /// whole and <see cref="RootLink"/> names it, <paramref name="newRelease"/> after each later copy
    /// that moved the link; <paramref name="rootInForce"/> tells which version folder is still served.
    /// </summary>
    void Start(Action firstRelease, Action newRelease, Func<string?> rootInForce);

    /// <summary>Writes the source's property of the /healthz body (such as <c>"bucket":{...}</c>).</summary>
    void WriteHealth(Utf8JsonWriter json);
}
