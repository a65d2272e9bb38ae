using System.Text;

namespace Peregrine.Indexing;

/// <summary>
/// A directory's entries in all three orders, sorted once when the directory is indexed so that a
/// request costs O(page), not O(n log n): a 100,000-entry folder is sorted once, never per request.
/// </summary>
/// <remarks>
/// <para>
/// Entries are held once, directories first and each group in name order; the size and date orders
/// are index permutations over that array (4 bytes an entry each) rather than two more copies of
/// the entries. Descending order is not stored: it is the same permutation read backwards within
/// each group, so directories stay first either way.
/// </para>
/// <para>
/// Immutable once built, so one instance can be shared by every request for the directory, on any
/// thread. Built with the catalog snapshot (<see cref="DirectoryEntries"/>) and held by the
/// folder's entry; the listing stage pages and renders it.
/// </para>
/// </remarks>
internal sealed class SortedViews
{
    // Directories first, then files; each group in name order.
    private readonly ListingItem[] _byName;
    private readonly int[] _bySize;
    private readonly int[] _byDate;

    private SortedViews(ListingItem[] byName, int directoryCount, int[] bySize, int[] byDate)
    {
        _byName = byName;
        DirectoryCount = directoryCount;
        _bySize = bySize;
        _byDate = byDate;
    }

    /// <summary>A listing with no entries.</summary>
    public static SortedViews Empty { get; } = new([], 0, [], []);

    /// <summary>How many entries are listed, after hidden and unlinkable names were dropped.</summary>
    public int Count => _byName.Length;

    /// <summary>How many of the listed entries are directories.</summary>
    public int DirectoryCount { get; }

    /// <summary>How many of the listed entries are files.</summary>
    public int FileCount => _byName.Length - DirectoryCount;

    /// <summary>
    /// Sorts <paramref name="items"/>, in any order, into the three views. Names starting with a
    /// dot are dropped even though the catalog never passes them, so a catalog bug cannot expose
    /// <c>.git</c> or <c>.env</c> through a listing; so are names that are not valid UTF-16, which
    /// no decoded request path can reach and so no link could open.
    /// </summary>
    public static SortedViews Create(ReadOnlySpan<ListingItem> items)
    {
        var directoryCount = 0;
        var count = 0;
        foreach (var item in items)
        {
            if (IsListable(item.Name))
            {
                count++;
                if (item.IsDirectory)
                {
                    directoryCount++;
                }
            }
        }

        if (count == 0)
        {
            return Empty;
        }

        var byName = new ListingItem[count];
        int nextDirectory = 0, nextFile = directoryCount;
        foreach (var item in items)
        {
            if (IsListable(item.Name))
            {
                byName[item.IsDirectory ? nextDirectory++ : nextFile++] = item;
            }
        }

        byName.AsSpan(0, directoryCount).Sort(CompareNames);
        byName.AsSpan(directoryCount).Sort(CompareNames);

        // Directories have no size: they keep name order in the size view.
        var bySize = Identity(count);
        SortRange(bySize, byName, directoryCount, count, static item => item.Length);

        var byDate = Identity(count);
        SortRange(byDate, byName, 0, directoryCount, static item => item.LastModified.UtcTicks);
        SortRange(byDate, byName, directoryCount, count, static item => item.LastModified.UtcTicks);

        return new SortedViews(byName, directoryCount, bySize, byDate);
    }

    /// <summary>The entry at <paramref name="position"/> in the given order, directories first.</summary>
    public ListingItem At(ListingSort sort, bool descending, int position)
    {
        if ((uint)position >= (uint)_byName.Length)
        {
            throw new ArgumentOutOfRangeException(nameof(position));
        }

        var index = position;
        if (descending)
        {
            // Reverse within each group so that directories stay first.
            index = position < DirectoryCount
                ? DirectoryCount - 1 - position
                : _byName.Length + DirectoryCount - 1 - position;
        }

        return sort switch
        {
            ListingSort.Size => _byName[_bySize[index]],
            ListingSort.Date => _byName[_byDate[index]],
            _ => _byName[index],
        };
    }

    private static bool IsListable(string? name)
    {
        if (string.IsNullOrEmpty(name) || name[0] == '.')
        {
            return false;
        }

        // Fast path: without surrogates the name is valid UTF-16.
        var rest = name.AsSpan();
        if (rest.IndexOfAnyInRange('\uD800', '\uDFFF') < 0)
        {
            return true;
        }

        while (!rest.IsEmpty)
        {
            if (Rune.DecodeFromUtf16(rest, out _, out var consumed) != System.Buffers.OperationStatus.Done)
            {
                return false;
            }

            rest = rest[consumed..];
        }

        return true;
    }

    // Case-insensitive first, so that "README" sits among the r's rather than before every
    // lower-case name; ordinal ties keep the order total and culture-independent.
    private static int CompareNames(ListingItem x, ListingItem y)
    {
        var order = string.Compare(x.Name, y.Name, StringComparison.OrdinalIgnoreCase);
        return order != 0 ? order : string.CompareOrdinal(x.Name, y.Name);
    }

    private static int[] Identity(int count)
    {
        var order = new int[count];
        for (var i = 0; i < order.Length; i++)
        {
            order[i] = i;
        }

        return order;
    }

    // Sorts order[from..to) by key. Ties fall back to the index into the name-sorted array, so the
    // sort is stable with respect to name order, and it compares integers, never strings.
    private static void SortRange(int[] order, ListingItem[] byName, int from, int to, Func<ListingItem, long> key)
    {
        if (to - from < 2)
        {
            return;
        }

        var keyed = new (long Key, int Index)[to - from];
        for (var i = 0; i < keyed.Length; i++)
        {
            var index = order[from + i];
            keyed[i] = (key(byName[index]), index);
        }

        keyed.AsSpan().Sort();
        for (var i = 0; i < keyed.Length; i++)
        {
            order[from + i] = keyed[i].Index;
        }
    }
}

/// <summary>The column a listing is ordered by. Directories come first whatever the column.</summary>
internal enum ListingSort : byte
{
    /// <summary>Case-insensitive ordinal order of names, ties broken by ordinal order.</summary>
    Name,

    /// <summary>File length; directories have no size and keep name order among themselves.</summary>
    Size,

    /// <summary>Last modification time; ties keep name order.</summary>
    Date,
}
