namespace Peregrine.Indexing;

/// <summary>One entry of a directory as the listing shows it.</summary>
/// <param name="Name">The entry's own name, not a path; never percent-encoded or HTML-escaped.</param>
/// <param name="IsDirectory">Directories are listed before files and link with a trailing slash.</param>
/// <param name="Length">The file's length in bytes; ignored for directories, which have no size.</param>
/// <param name="LastModified">Shown and serialized in UTC, truncated to whole seconds as Last-Modified is.</param>
internal readonly record struct ListingItem(string Name, bool IsDirectory, long Length, DateTimeOffset LastModified);
