using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Connections.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Core.Features;
using Microsoft.Extensions.Primitives;
using Peregrine.Catalog;
using Peregrine.Diagnostics;
using Peregrine.Preconditions;
using Peregrine.Select;

namespace Peregrine.FastPath;

// Answering one request head: lookup, negotiation, preconditions and the encoded response.
internal sealed partial class Http1FastPath
{
    private bool TryRespond(ReadOnlySpan<byte> head, PipeWriter output, out bool close, out long written)
    {
        close = false;
        written = 0;
        var snapshot = _catalog.Current;
        if (snapshot is null || !RequestHead.TryParse(head, out var request) || (request.HasOrigin && _headers.Cors.VariesByOrigin) || request.Path.Length > 1024)
        {
            return false;
        }

        Span<char> path = stackalloc char[request.Path.Length];
        Ascii.ToUtf16(request.Path, path, out _);
        if (!snapshot.TryFind(path, out var entry) || !entry.IsFile || (_reserved.Count != 0 && IsReserved(path)))
        {
            // Redirects, listings, misses and SPA fallbacks are the middleware's.
            return false;
        }

        var representation = entry.Identity;
        if (entry.Negotiable && !request.AcceptEncoding.IsEmpty && entry.Encoded is { Available: not ContentCodings.None } encoded)
        {
            if (request.AcceptEncoding.Length > 512)
            {
                return false;
            }

            Span<char> accept = stackalloc char[request.AcceptEncoding.Length];
            Ascii.ToUtf16(request.AcceptEncoding, accept, out _);
            if (AcceptEncoding.TrySelect(accept, encoded.Available, out var coding))
            {
                representation = encoded.Get(coding) ?? entry.Identity;
            }
        }

        if (representation.Content is not { } content)
        {
            return false;
        }

        // RFC 9110 §13.2.2, for the two preconditions browsers send. Anything subtler (a date
        // that is not our own Last-Modified verbatim, If-Match, ranges) was handed off above.
        var notModified = false;
        if (!request.IfNoneMatch.IsEmpty)
        {
            if (request.IfNoneMatch.Length > 1024)
            {
                return false;
            }

            Span<char> tags = stackalloc char[request.IfNoneMatch.Length];
            Ascii.ToUtf16(request.IfNoneMatch, tags, out _);
            notModified = Preconditions.Preconditions.ValueMatches(tags, representation.ETag.ToString(), weak: true);
        }
        else if (!request.IfModifiedSince.IsEmpty)
        {
            var lastModified = entry.LastModifiedHeader.ToString();
            if (request.IfModifiedSince.Length != lastModified.Length || !Ascii.Equals(request.IfModifiedSince, lastModified))
            {
                return false;
            }

            notModified = true;
        }

        var blocks = representation.FastPathBlocks ??= ResponseBlocks.Create(entry, representation, _headers.VaryFor(entry), _headers.Extra, _serverHeader);
        output.Write(notModified ? blocks.NotModified : blocks.Ok);
        output.Write(HttpDate.Line);
        if (request.Close)
        {
            output.Write(CloseLine);
            close = true;
        }

        output.Write("\r\n"u8);
        var bodyBytes = notModified || request.IsHead ? 0 : content.Length;
        if (bodyBytes != 0)
        {
            output.Write(content);
        }

        written = bodyBytes + (notModified ? blocks.NotModified.Length : blocks.Ok.Length);

        _metrics.Served(notModified ? StatusCodes.Status304NotModified : StatusCodes.Status200OK, bodyBytes, fromMemory: true,
            ReferenceEquals(representation, entry.Identity) || notModified ? 0 : entry.Identity.Length - representation.Length);
        return true;
    }

    private bool IsReserved(ReadOnlySpan<char> path) => _reservedLookup.Contains(path);
}
