using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Microsoft.Net.Http.Headers;

namespace Peregrine.Conditional;

internal enum PreconditionResult : byte
{
    /// <summary>Send the representation (or the ranges of it).</summary>
    Proceed,

    /// <summary>304: the client's copy is current.</summary>
    NotModified,

    /// <summary>412: a precondition the client set does not hold.</summary>
    Failed,
}

/// <summary>
/// Conditional requests for GET and HEAD, evaluated in the order RFC 9110 §13.2.2 lays down.
/// Allocation-free: entity-tag lists are scanned in place, and the common case of a client
/// echoing our own validator is an ordinal string comparison.
/// </summary>
internal static class ConditionalRequest
{
    public static PreconditionResult Evaluate(IHeaderDictionary request, StringValues etag, StringValues lastModifiedHeader, DateTimeOffset lastModified)
    {
        var ifMatch = request.IfMatch;
        var ifNoneMatch = request.IfNoneMatch;
        var ifModifiedSince = request.IfModifiedSince;
        var ifUnmodifiedSince = request.IfUnmodifiedSince;
        if (ifMatch.Count == 0 && ifNoneMatch.Count == 0 && ifModifiedSince.Count == 0 && ifUnmodifiedSince.Count == 0)
        {
            return PreconditionResult.Proceed;
        }

        var tag = etag.ToString().AsSpan();

        // Step 1 (§13.1.1): If-Match uses the strong comparison; no match means 412.
        if (ifMatch.Count > 0)
        {
            if (!ListMatches(ifMatch, tag, weak: false))
            {
                return PreconditionResult.Failed;
            }
        }

        // Step 2 (§13.1.4): If-Unmodified-Since, only when If-Match is absent; an invalid date
        // is ignored.
        else if (ifUnmodifiedSince.Count == 1
            && TryParseDate(ifUnmodifiedSince, lastModifiedHeader, out var unmodifiedSince)
            && lastModified > unmodifiedSince)
        {
            return PreconditionResult.Failed;
        }

        // Step 3 (§13.1.2): If-None-Match uses the weak comparison; for GET and HEAD a match
        // means 304.
        if (ifNoneMatch.Count > 0)
        {
            return ListMatches(ifNoneMatch, tag, weak: true) ? PreconditionResult.NotModified : PreconditionResult.Proceed;
        }

        // Step 4 (§13.1.3): If-Modified-Since, only when If-None-Match is absent. More than
        // one member or an invalid date means the field is ignored.
        if (ifModifiedSince.Count == 1
            && TryParseDate(ifModifiedSince, lastModifiedHeader, out var modifiedSince)
            && lastModified <= modifiedSince)
        {
            return PreconditionResult.NotModified;
        }

        return PreconditionResult.Proceed;
    }

    /// <summary>
    /// RFC 9110 §13.1.5: a Range is honoured only if If-Range, when present, still names the
    /// representation: an entity-tag by strong comparison, or a date equal to Last-Modified.
    /// Otherwise the whole representation is sent.
    /// </summary>
    public static bool IfRangeHolds(StringValues ifRange, StringValues etag, DateTimeOffset lastModified)
    {
        if (ifRange.Count == 0)
        {
            return true;
        }

        if (ifRange.Count > 1)
        {
            return false;
        }

        var value = ifRange[0].AsSpan().Trim();
        if (value.StartsWith("W/", StringComparison.Ordinal))
        {
            // A weak tag never matches strongly.
            return false;
        }

        if (value.Length > 0 && value[0] == '"')
        {
            return value.SequenceEqual(etag.ToString());
        }

        // §13.1.5: a date matches only when it is exactly Last-Modified. Our Last-Modified is
        // the file's mtime rounded down to the second, and the ETag is the strong validator, so
        // an exact date match is the most that can be trusted.
        return HeaderUtilities.TryParseDate(ifRange[0], out var date) && date == lastModified;
    }

    /// <summary>
    /// Steps 3 and 4 of <see cref="Evaluate"/> for a request whose only preconditions are one
    /// If-None-Match line and one If-Modified-Since line (empty when absent), as the HTTP/1.1
    /// fast path reads them; it hands any other precondition to <see cref="Evaluate"/>. Returns
    /// false where it cannot be sure without parsing a date (one that is not our Last-Modified
    /// verbatim), and the request then goes the full way.
    /// </summary>
    internal static bool TryEvaluateRevalidation(ReadOnlySpan<char> ifNoneMatch, ReadOnlySpan<byte> ifModifiedSince, StringValues etag, StringValues lastModifiedHeader, out PreconditionResult result)
    {
        result = PreconditionResult.Proceed;
        if (!ifNoneMatch.IsEmpty)
        {
            if (ValueMatches(ifNoneMatch, etag.ToString(), weak: true))
            {
                result = PreconditionResult.NotModified;
            }

            return true;
        }

        if (ifModifiedSince.IsEmpty)
        {
            return true;
        }

        if (System.Text.Ascii.Equals(ifModifiedSince, lastModifiedHeader.ToString()))
        {
            result = PreconditionResult.NotModified;
            return true;
        }

        return false;
    }

    /// <summary>
    /// <see cref="IfRangeHolds"/> for the one If-Range line the HTTP/1.1 fast path reads. Returns
    /// false where it cannot be sure without parsing a date (one that is not our Last-Modified
    /// verbatim), and the request then goes the full way.
    /// </summary>
    internal static bool TryEvaluateIfRange(ReadOnlySpan<byte> ifRange, StringValues etag, StringValues lastModifiedHeader, out bool holds)
    {
        holds = false;
        if (ifRange.StartsWith("W/"u8))
        {
            // A weak tag never matches strongly.
            return true;
        }

        if (!ifRange.IsEmpty && ifRange[0] == '"')
        {
            holds = System.Text.Ascii.Equals(ifRange, etag.ToString());
            return true;
        }

        holds = System.Text.Ascii.Equals(ifRange, lastModifiedHeader.ToString());
        return holds;
    }

    /// <summary>
    /// True when the field value (<c>*</c> or a list of entity-tags, §8.8.3) names
    /// <paramref name="tag"/>. A malformed list matches nothing from the point it goes wrong.
    /// </summary>
    internal static bool ListMatches(StringValues field, ReadOnlySpan<char> tag, bool weak)
    {
        foreach (var value in field)
        {
            if (value is not null && ValueMatches(value, tag, weak))
            {
                return true;
            }
        }

        return false;
    }

    internal static bool ValueMatches(ReadOnlySpan<char> value, ReadOnlySpan<char> tag, bool weak)
    {
        var i = 0;
        while (true)
        {
            // Skip the list's separators and optional white space (RFC 9110 §5.6.1).
            while (i < value.Length && (value[i] is ',' or ' ' or '\t'))
            {
                i++;
            }

            if (i >= value.Length)
            {
                return false;
            }

            if (value[i] == '*')
            {
                // "*" matches any current representation, and this one exists.
                return true;
            }

            var isWeak = false;
            if (value[i] == 'W' && i + 1 < value.Length && value[i + 1] == '/')
            {
                isWeak = true;
                i += 2;
            }

            if (i >= value.Length || value[i] != '"')
            {
                return false;
            }

            // The opaque tag runs to the next quote: etagc excludes DQUOTE, so a comma inside
            // the quotes belongs to the tag.
            var close = value[(i + 1)..].IndexOf('"');
            if (close < 0)
            {
                return false;
            }

            var opaque = value.Slice(i, close + 2);
            if ((weak || !isWeak) && opaque.SequenceEqual(tag))
            {
                return true;
            }

            i += close + 2;
        }
    }

    private static bool TryParseDate(StringValues field, StringValues lastModifiedHeader, out DateTimeOffset date)
    {
        var value = field[0];
        if (string.Equals(value, lastModifiedHeader[0], StringComparison.Ordinal))
        {
            // Browsers echo Last-Modified verbatim: no need to parse our own date.
            date = DateTimeOffset.MaxValue;
            return true;
        }

        // HeaderUtilities accepts the IMF-fixdate and both obsolete forms, as §5.6.7 requires.
        return HeaderUtilities.TryParseDate(value, out date);
    }
}
