using System.Buffers;
using System.Globalization;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;
using Peregrine.Catalog;
using Peregrine.Conditional;
using Peregrine.Ranges;
using Peregrine.Send;

namespace Peregrine;

/// <summary>Range requests (RFC 9110 §14) on the selected representation.</summary>
internal sealed partial class PeregrineMiddleware
{
    // One boundary for the process: it only has to be absent from the parts' own lines, which
    // are ours, and 32 random alphanumerics make a collision with file bytes irrelevant.
    private static readonly string s_boundary = MultipartByteRanges.NewBoundary();
    private static readonly StringValues s_multipartContentType = MultipartByteRanges.ContentType(s_boundary);

    private static readonly StringValues s_acceptRanges = "bytes";

    private Task ServeRanges(HttpContext context, CatalogEntry entry, Representation representation, FileResponse described, StringValues rangeHeader)
    {
        var request = context.Request;
        var response = context.Response;
        var headers = response.Headers;
        var length = representation.Length;

        Span<ByteRange> ranges = stackalloc ByteRange[RangeParser.MaxRanges];
        var count = 0;
        var outcome = ConditionalRequest.IfRangeHolds(request.Headers.IfRange, representation.ETag, entry.LastModified)
            ? RangeParser.Parse(rangeHeader, length, ranges, out count)
            : RangeOutcome.Ignore;

        switch (outcome)
        {
            case RangeOutcome.Unsatisfiable:
                // §15.5.17: 416 names the current length.
                response.StatusCode = StatusCodes.Status416RangeNotSatisfiable;
                headers.AcceptRanges = s_acceptRanges;
                headers.ContentRange = "bytes */" + length.ToString(CultureInfo.InvariantCulture);
                response.ContentLength = 0;
                _metrics.Served(StatusCodes.Status416RangeNotSatisfiable, 0, fromMemory: true, 0);
                return Task.CompletedTask;

            case RangeOutcome.Partial when count == 1:
                var single = ranges[0];
                response.StatusCode = StatusCodes.Status206PartialContent;
                described.WriteContent(headers);
                headers.ContentRange = ContentRange(single, length);
                response.ContentLength = single.Length;
                _metrics.Served(StatusCodes.Status206PartialContent, single.Length, representation.Content is not null, 0);
                return representation.Content is { } content
                    ? WriteAsync(response, content.AsMemory((int)single.Start, (int)single.Length))
                    : SendFromDiskAsync(context, entry, representation, single.Start, single.Length);

            case RangeOutcome.Partial:
                // §14.6: several ranges go as multipart/byteranges; each part names its range and
                // the representation's type, and the coding applies to every part.
                var selected = ranges[..count].ToArray();
                var partType = entry.ContentType.ToString();
                response.StatusCode = StatusCodes.Status206PartialContent;
                described.WriteContent(headers);
                headers.ContentType = s_multipartContentType;
                response.ContentLength = MultipartByteRanges.ComputeLength(selected, length, partType, s_boundary);
                _metrics.Served(StatusCodes.Status206PartialContent, response.ContentLength.Value, representation.Content is not null, 0);
                return SendMultipartAsync(context, entry, representation, selected, partType);

            default:
                described.WriteContent(headers);
                response.ContentLength = length;
                _metrics.Served(StatusCodes.Status200OK, length, representation.Content is not null, Saved(entry, representation));
                return representation.Content is { } whole
                    ? WriteAsync(response, whole)
                    : SendFromDiskAsync(context, entry, representation, 0, length);
        }
    }

    private static string ContentRange(ByteRange range, long length)
        => string.Create(CultureInfo.InvariantCulture, $"bytes {range.Start}-{range.Last}/{length}");

    private async Task SendMultipartAsync(HttpContext context, CatalogEntry entry, Representation representation, ByteRange[] ranges, string partType)
    {
        var writer = context.Response.BodyWriter;
        var headerSize = MultipartByteRanges.MaxPartHeaderLength(partType, s_boundary);
        var expectedTicks = ExpectedLastWrite(entry, representation);
        using var handle = representation.Content is null
            ? FileSender.TryOpen(representation.PhysicalPath!, representation.Length, expectedTicks)
            : null;
        if (representation.Content is null && handle is null)
        {
            await ServeCurrentVersionAsync(context, entry);
            return;
        }

        for (var i = 0; i < ranges.Length; i++)
        {
            var range = ranges[i];
            var written = MultipartByteRanges.WritePartHeader(writer.GetSpan(headerSize), i == 0, range, representation.Length, partType, s_boundary);
            writer.Advance(written);
            if (representation.Content is { } content)
            {
                await writer.WriteAsync(content.AsMemory((int)range.Start, (int)range.Length), context.RequestAborted);
            }
            else if (!await FileSender.CopyAsync(context, handle!, range.Start, range.Length, representation.Length, expectedTicks))
            {
                PeregrineLog.FileChangedWhileSending(_logger, entry.RelativePath);
                ResponseAborter.Abort(context);
                return;
            }
        }

        var closing = MultipartByteRanges.WriteClosing(writer.GetSpan(headerSize), s_boundary);
        writer.Advance(closing);
        await writer.FlushAsync(context.RequestAborted);
    }
}
