using System.Globalization;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Conditional;
using Peregrine.Indexing;
using Peregrine.Ranges;

namespace Peregrine.Serving;

/// <summary>Range requests (RFC 9110 §14) on the selected representation.</summary>
internal sealed partial class PeregrineMiddleware
{
    private static readonly StringValues s_acceptRanges = "bytes";

    /// <summary>
    /// Decides what a Range field asks for: 416, or the ranges (one, or several as
    /// multipart/byteranges) or the whole representation, which the sender then sends.
    /// </summary>
    private Task ServeRanges(HttpContext context, CatalogEntry entry, Representation representation, ResponseFields described, StringValues rangeHeader)
    {
        var length = representation.Length;
        Span<ByteRange> ranges = stackalloc ByteRange[RangeParser.MaxRanges];
        var count = 0;
        var outcome = ConditionalRequest.IfRangeHolds(context.Request.Headers.IfRange, representation.ETag, entry.LastModified)
            ? RangeParser.Parse(rangeHeader, length, ranges, out count)
            : RangeOutcome.Ignore;

        switch (outcome)
        {
            case RangeOutcome.Unsatisfiable:
                // §15.5.17: 416 names the current length.
                var response = context.Response;
                var headers = response.Headers;
                response.StatusCode = StatusCodes.Status416RangeNotSatisfiable;
                headers.AcceptRanges = s_acceptRanges;
                headers.ContentRange = "bytes */" + length.ToString(CultureInfo.InvariantCulture);
                response.ContentLength = 0;
                _metrics.Served(StatusCodes.Status416RangeNotSatisfiable, 0, fromMemory: true, 0);
                return Task.CompletedTask;

            case RangeOutcome.Partial when count == 1:
                return _sender.SendRange(context, entry, representation, described, ranges[0]);

            case RangeOutcome.Partial:
                return _sender.SendMultipart(context, entry, representation, described, ranges[..count]);

            default:
                return _sender.SendWhole(context, entry, representation, described, isHead: false);
        }
    }
}
