using Peregrine.StaticWebAssets;

namespace Peregrine.Indexing;

/// <summary>
/// The static web assets manifest's routes in the index (<see cref="PeregrineOptions.Routes"/>):
/// each alias is added, as the last step, under its path, answering with its target's entry
/// (<see cref="CatalogEntry.ForAlias"/>). An alias whose target is not in the index is not
/// added; its path goes on to the next middleware as any unknown path does. An alias takes its
/// path even where a file of that name exists, as the manifest's route does in MapStaticAssets.
/// </summary>
internal static class RouteEntries
{
    /// <summary>Adds every alias whose target the whole index holds.</summary>
    public static void Add(Dictionary<string, CatalogEntry> entries, AssetRouteTable routes)
    {
        foreach (var alias in routes.Aliases)
        {
            if (entries.TryGetValue(alias.Target, out var target) && IsOwnFile(target, alias.Target))
            {
                entries[alias.Path] = CatalogEntry.ForAlias(target, alias.Stated, routes.IsFingerprintedRouteOf(alias));
            }
        }
    }

    /// <summary>
    /// For an incremental update: the aliases of each changed path follow their target (made
    /// again over its new entry, or taken out with it).
    /// </summary>
    /// <param name="changes">The update's changes, by path; aliases are added to them.</param>
    /// <param name="routes">The table in force.</param>
    public static void Follow(Dictionary<string, CatalogEntry?> changes, AssetRouteTable routes)
    {
        if (routes.IsEmpty)
        {
            return;
        }

        foreach (var path in changes.Keys.ToList())
        {
            var changed = changes[path];
            foreach (var alias in routes.AliasesOf(path))
            {
                changes[alias.Path] = changed is not null && IsOwnFile(changed, path)
                    ? CatalogEntry.ForAlias(changed, alias.Stated, routes.IsFingerprintedRouteOf(alias))
                    : null;
            }
        }
    }

    /// <summary>A file under its own path: not a folder's default document, a redirect or another alias.</summary>
    private static bool IsOwnFile(CatalogEntry entry, string path)
        => entry.IsFile && entry.AliasOf is null && string.Equals(entry.RelativePath, path, StringComparison.Ordinal);
}
