using System.Buffers;
using System.Text.Json;
using Peregrine.Indexing;

namespace Peregrine.Listing;

internal static partial class DirectoryListing
{
    /// <summary>
    /// Renders one page of <paramref name="items"/> as JSON for scripts and tools:
    /// <c>{"path","sort","order","page","pageSize","total","pages","items":[{"name","type","size","modified"}]}</c>.
    /// </summary>
    /// <remarks>
    /// Written with <see cref="Utf8JsonWriter"/> rather than a serializer, which would need
    /// reflection or a source-generated context and would copy the page into DTOs first.
    /// <c>page</c> is the page actually shown (out-of-range requests show the last one);
    /// <c>total</c> counts every entry, not just this page's; <c>type</c> is <c>"file"</c> or
    /// <c>"directory"</c>; <c>size</c> is a byte count for files and <c>null</c> for directories,
    /// which have none; <c>modified</c> is ISO 8601 in UTC to the second, e.g.
    /// <c>"2024-05-01T12:34:56Z"</c>. Names are raw (not percent-encoded); the writer's default
    /// escaping keeps the document safe to embed in HTML.
    /// </remarks>
    public static byte[] RenderJson(string displayPath, SortedViews items, ListingQuery query)
    {
        var page = items.Page(query);
        var buffer = new ArrayBufferWriter<byte>(256 + (page.Count * 128));
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WriteString("path"u8, displayPath);
            json.WriteString("sort"u8, SortName(query.Sort));
            json.WriteString("order"u8, query.Descending ? "desc"u8 : "asc"u8);
            json.WriteNumber("page"u8, page.Number);
            json.WriteNumber("pageSize"u8, page.Size);
            json.WriteNumber("total"u8, items.Count);
            json.WriteNumber("pages"u8, page.Pages);
            json.WriteStartArray("items"u8);
            for (var position = page.Start; position < page.Start + page.Count; position++)
            {
                var item = items.At(query.Sort, query.Descending, position);
                json.WriteStartObject();
                json.WriteString("name"u8, item.Name);
                if (item.IsDirectory)
                {
                    json.WriteString("type"u8, "directory"u8);
                    json.WriteNull("size"u8);
                }
                else
                {
                    json.WriteString("type"u8, "file"u8);
                    json.WriteNumber("size"u8, item.Length);
                }

                json.WriteString("modified"u8, WholeSecondsUtc(item.LastModified));
                json.WriteEndObject();
            }

            json.WriteEndArray();
            json.WriteEndObject();
        }

        return buffer.WrittenSpan.ToArray();
    }
}
