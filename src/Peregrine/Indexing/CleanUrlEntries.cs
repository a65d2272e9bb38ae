namespace Peregrine.Indexing;

/// <summary>
/// Clean URLs, the last step of an index when <see cref="PeregrineOptions.CleanUrls"/> is on:
/// each page <c>/about.html</c> is also found at <c>/about</c>, and its own path becomes a 308
/// redirect there. A folder's default document redirects to the folder (<c>/docs/index.html</c>
/// to <c>/docs/</c>). A page whose clean path is already taken, by a file or a folder named
/// <c>about</c>, keeps its <c>.html</c> path and gets no alias. Decided here, once per index:
/// a request finds the page, or the redirect, in its one lookup.
/// </summary>
internal static class CleanUrlEntries
{
    private const string Extension = ".html";

    public static void Add(Dictionary<string, CatalogEntry> entries, PeregrineOptions options)
    {
        // Collected first: the loop below changes the dictionary. Only a page under its own path
        // (not a folder's "/" entry for its default document).
        var pages = new List<CatalogEntry>();
        foreach (var (path, entry) in entries)
        {
            if (entry.IsFile && path.EndsWith(Extension, StringComparison.Ordinal) && string.Equals(path, entry.RelativePath, StringComparison.Ordinal))
            {
                pages.Add(entry);
            }
        }

        foreach (var page in pages)
        {
            var path = page.RelativePath;
            var slash = path.LastIndexOf('/');
            var folder = path[..slash];
            if (options.DefaultDocuments.Contains(path[(slash + 1)..])
                && entries.TryGetValue(folder + "/", out var served) && ReferenceEquals(served, page))
            {
                entries[path] = CatalogEntry.ForCleanUrlRedirect(page, DirectoryEntries.EncodePath(folder) + "/");
                continue;
            }

            var clean = path[..^Extension.Length];
            if (clean.Length == slash + 1 || entries.ContainsKey(clean))
            {
                continue;
            }

            entries[clean] = page;
            entries[path] = CatalogEntry.ForCleanUrlRedirect(page, DirectoryEntries.EncodePath(clean));
        }
    }
}
