using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.StaticWebAssets;

/// <summary>
/// Manifests written by the .NET 10 SDK for an app made by <c>dotnet new blazor</c> that
/// references a <c>dotnet new razorclasslib</c> named Lib: the runtime manifest whole, and the
/// endpoints manifests of <c>dotnet build</c> and <c>dotnet publish</c> cut to the routes of a
/// few assets. Folders were rewritten to start at <c>/fixture/</c>; nothing else was changed.
/// </summary>
internal static class ManifestFiles
{
    public static string Folder { get; } = Path.Combine(RepositoryRoot.Path, "tests", "Peregrine.Tests", "StaticWebAssets", "Manifests");

    public static string BuildRuntime => Path.Combine(Folder, "BlazorApp.build.runtime.json");

    public static string BuildEndpoints => Path.Combine(Folder, "BlazorApp.build.endpoints.json");

    public static string PublishEndpoints => Path.Combine(Folder, "BlazorApp.publish.endpoints.json");

    public static Stream Json(string text) => new MemoryStream(System.Text.Encoding.UTF8.GetBytes(text));

    /// <summary>The Cache-Control field as sent (HttpClient's parsed value reorders directives).</summary>
    public static string? CacheControl(HttpResponseMessage response)
        => response.Headers.NonValidated.TryGetValues("Cache-Control", out var values) ? string.Join(", ", values) : null;
}
