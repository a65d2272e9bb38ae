using System.Runtime.InteropServices;
using Peregrine.Sources;

namespace Peregrine.Indexing;

/// <summary>
/// The entries of folders, third step of an index, once the file entries are built: a folder
/// with a default document serves it at <c>/folder/</c>; without one it is listed there when
/// listings are on; either way <c>/folder</c> redirects to <c>/folder/</c>. A folder with
/// neither has no entry, so it answers as a missing file does.
/// </summary>
internal static class DirectoryEntries
{
    /// <summary>Adds the folder entries of <paramref name="directories"/> to the file entries.</summary>
    public static void Add(Dictionary<string, CatalogEntry> entries, List<FoundDirectory> directories, PeregrineOptions options)
    {
        var listings = options.DirectoryListing ? CollectChildren(entries, directories) : null;
        foreach (var (relative, lastWrite) in directories)
        {
            CatalogEntry? index = null;
            foreach (var document in options.DefaultDocuments)
            {
                if (entries.TryGetValue(relative + "/" + document, out index))
                {
                    break;
                }
            }

            if (index is not null)
            {
                // "/docs/" serves the index; "/docs" redirects there (and "" does, under a
                // mount point, so that "/static" becomes "/static/").
                entries[relative + "/"] = index;
            }
            else if (listings is not null)
            {
                // Sorted once here, so a request renders one page without sorting anything.
                var children = listings.TryGetValue(relative, out var items) ? items : [];
                entries[relative + "/"] = CatalogEntry.ForListing(relative, EncodePath(relative) + "/", SortedViews.Create(CollectionsMarshal.AsSpan(children)));
            }
            else
            {
                continue;
            }

            entries[relative] = CatalogEntry.ForDirectoryRedirect(relative, EncodePath(relative) + "/");
        }
    }

    private static Dictionary<string, List<ListingItem>> CollectChildren(Dictionary<string, CatalogEntry> entries, List<FoundDirectory> directories)
    {
        var children = new Dictionary<string, List<ListingItem>>(StringComparer.Ordinal);
        void Add(string relative, ListingItem item)
        {
            var parent = relative[..relative.LastIndexOf('/')];
            if (!children.TryGetValue(parent, out var list))
            {
                children[parent] = list = [];
            }

            list.Add(item);
        }

        foreach (var entry in entries.Values)
        {
            Add(entry.RelativePath, new ListingItem(entry.RelativePath[(entry.RelativePath.LastIndexOf('/') + 1)..], false, entry.Identity.Length, entry.LastModified));
        }

        foreach (var (relative, lastWrite) in directories)
        {
            if (relative.Length != 0)
            {
                var seconds = lastWrite.Ticks - (lastWrite.Ticks % TimeSpan.TicksPerSecond);
                Add(relative, new ListingItem(relative[(relative.LastIndexOf('/') + 1)..], true, 0, new DateTimeOffset(seconds, TimeSpan.Zero)));
            }
        }

        return children;
    }

    /// <summary>The path percent-encoded segment by segment, for a Location or a link.</summary>
    internal static string EncodePath(string relative)
    {
        if (relative.Length == 0)
        {
            return "";
        }

        var segments = relative[1..].Split('/');
        for (var i = 0; i < segments.Length; i++)
        {
            segments[i] = Uri.EscapeDataString(segments[i]);
        }

        return "/" + string.Join('/', segments);
    }
}
