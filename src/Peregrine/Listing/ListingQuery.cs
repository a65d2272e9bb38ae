using Peregrine.Indexing;

namespace Peregrine.Listing;

/// <summary>
/// What one request asks of a listing. <c>default(ListingQuery)</c> is meaningful: name order,
/// ascending, first page, <see cref="DirectoryListing.DefaultPageSize"/> entries.
/// </summary>
/// <param name="Sort">The column to order by.</param>
/// <param name="Descending">Reverses the order within directories and within files; directories stay first.</param>
/// <param name="Page">1-based. Anything below 1 means the first page, anything past the end the last one.</param>
/// <param name="PageSize">Entries per page. Zero or less means <see cref="DirectoryListing.DefaultPageSize"/>;
/// more than <see cref="DirectoryListing.MaxPageSize"/> is capped.</param>
internal readonly record struct ListingQuery(ListingSort Sort, bool Descending, int Page, int PageSize);

/// <summary>
/// The window of a sorted listing that one response shows, after the requested page has been
/// clamped to the pages that exist.
/// </summary>
/// <param name="Number">1-based page number actually shown.</param>
/// <param name="Pages">How many pages the listing has; at least 1, so an empty folder is "page 1 of 1".</param>
/// <param name="Size">Entries per page, after defaulting and capping.</param>
/// <param name="Start">Position of the first entry shown, in the sorted order.</param>
/// <param name="Count">How many entries are shown: <see cref="Size"/> except on the last page.</param>
internal readonly record struct ListingPage(int Number, int Pages, int Size, int Start, int Count);
