using System.Buffers;
using System.Globalization;
using System.IO.Pipelines;
using System.Text;
using Microsoft.AspNetCore.Http;
using Peregrine.Conditional;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Ranges;

namespace Peregrine.Http1;

// Answering one request head. The decisions are the middleware's own, called with the bytes the
// fast path read: RepresentationSelector chooses, Preconditions decides 304, ResponseFields says
// what the response carries. What is left here is framing: the blocks, Date, Connection, body.
internal sealed partial class Http1FastPath
{
    private static ReadOnlySpan<byte> CloseLine => "Connection: close\r\n"u8;
    private static ReadOnlySpan<byte> KeepAliveLine => "Connection: keep-alive\r\n"u8;

    // Longer values are rare enough that the full stack may have them; these bound the stack
    // copies below.
    private const int MaxPathChars = 1024;
    private const int MaxAcceptEncodingChars = 512;
    private const int MaxIfNoneMatchChars = 1024;
    private const int MaxRangeChars = 256;

    private static ReadOnlySpan<byte> PartialLine => "HTTP/1.1 206 Partial Content\r\nContent-Length: "u8;

    /// <remarks>
    /// <paramref name="cold"/> is set, and false returned, when the response is the fast path's
    /// but for its body's private copy, some of whose pages are not cached, and
    /// <paramref name="mayWarm"/> lets the caller wait for them (<see cref="FileBody.WarmAsync"/>)
    /// and ask again; otherwise such a request is handed on.
    /// </remarks>
    private bool TryRespond(in RequestHead request, PipeWriter output, bool https, bool mayWarm, out bool close, out long written, out FileBody? cold)
    {
        close = false;
        written = 0;
        cold = null;
        // The stages are PeregrineMiddleware.Serve's, marked alike; a request this cannot answer
        // as the middleware would is handed on (false).
        // :: key, and request (Syntax): RequestHead parsed the head and refused what the
        // middleware's RequestChecks refuse; the method is GET or HEAD (IsAnswerable).
        var started = _metrics.RequestStarted();
        var snapshot = _catalog.Current;
        if (snapshot is null || (request.HasOrigin && _headers.DependsOnOrigin) || request.Path.Length > MaxPathChars)
        {
            return false;
        }

        // :: find (Indexing)
        Span<char> path = stackalloc char[request.Path.Length];
        Ascii.ToUtf16(request.Path, path, out _);
        if (!snapshot.TryFind(path, out var entry) || !entry.IsFile || IsReserved(path) || (_scope.HandOffPrefixes.Length != 0 && _scope.HandsOff(path)))
        {
            // Redirects, listings, misses and SPA fallbacks are the middleware's.
            return false;
        }

        // :: negotiate (Negotiation)
        var representation = entry.Identity;
        if (!request.AcceptEncoding.IsEmpty && RepresentationSelector.HasChoice(entry))
        {
            if (request.AcceptEncoding.Length > MaxAcceptEncodingChars)
            {
                return false;
            }

            Span<char> accept = stackalloc char[request.AcceptEncoding.Length];
            Ascii.ToUtf16(request.AcceptEncoding, accept, out _);
            if (DeltaSelector.MayApply(entry, accept))
            {
                // A delta (RFC 9842) is the middleware's: it reads Available-Dictionary and the Fetch metadata.
                return false;
            }

            representation = RepresentationSelector.Select(entry, accept);
        }

        // A body on disk is the fast path's only when it can go by sendfile from this process's
        // private copy of the version (below); any other is Kestrel's, read off this thread.
        var content = representation.Content;
        if ((content is null && !(output is SocketOutput && _catalog.HoldsCopy(representation.PhysicalPath))) || request.IfNoneMatch.Length > MaxIfNoneMatchChars)
        {
            return false;
        }

        // :: preconditions (Conditional)
        Span<char> tags = stackalloc char[request.IfNoneMatch.Length];
        Ascii.ToUtf16(request.IfNoneMatch, tags, out _);
        if (!ConditionalRequest.TryEvaluateRevalidation(tags, request.IfModifiedSince, representation.ETag, entry.LastModifiedHeader, out var precondition))
        {
            return false;
        }

        var notModified = precondition == PreconditionResult.NotModified;

        // :: ranges (Ranges)
        // As the middleware (PeregrineMiddleware.Serve): a Range after the preconditions, on a
        // GET only (RFC 9110 §14.2), read against the selected representation when If-Range, if
        // any, holds. One satisfiable range is answered here with 206; an ignored Range, with the
        // whole; several ranges, or none satisfiable (416), are Kestrel's.
        var range = default(ByteRange);
        var partial = false;
        var ranged = request.HasRange && !notModified && !request.IsHead;
        if (ranged && request.HasIfRange)
        {
            if (!ConditionalRequest.TryEvaluateIfRange(request.IfRange, representation.ETag, entry.LastModifiedHeader, out ranged))
            {
                return false;
            }
        }

        if (ranged)
        {
            if (request.Range.Length > MaxRangeChars)
            {
                return false;
            }

            Span<char> rangeChars = stackalloc char[request.Range.Length];
            Ascii.ToUtf16(request.Range, rangeChars, out _);
            Span<ByteRange> ranges = stackalloc ByteRange[RangeParser.MaxRanges];
            switch (RangeParser.Parse(rangeChars, representation.Length, ranges, out var count))
            {
                case RangeOutcome.Partial when count == 1:
                    range = ranges[0];
                    partial = true;
                    break;
                case RangeOutcome.Ignore:
                    break;
                default:
                    return false;
            }
        }

        // :: send: the head precomputed for the entry (ResponseBlocks), then the body from
        // memory, from a sealed copy or from this process's private copy of a file on disk.
        var blocks = ResponseBlocks.For(entry, representation, _headers, _serverHeader);
        FileBody? diskCopy = null;
        if (content is null && !notModified && !request.IsHead)
        {
            // Only while every page is cached: sendfile would otherwise wait on the disk with
            // the connection's thread. The caller may wait for a thread of the pool to read the
            // pages back (Outcome.Warm) and ask again; Kestrel's read, if not, does not wait there.
            diskCopy = blocks.DiskCopy(representation.PhysicalPath!, representation.Length, ReferenceEquals(representation, entry.Identity) ? entry.LastWriteTicks : null);
            if (diskCopy is null)
            {
                return false;
            }

            if (!diskCopy.IsResident())
            {
                cold = mayWarm ? diskCopy : null;
                return false;
            }
        }

        var socket = output as SocketOutput;
        if (partial)
        {
            PutPartialHead(socket, output, blocks, range, representation.Length);
        }
        else
        {
            Put(socket, output, notModified ? blocks.NotModified : blocks.Ok);
        }

        Put(socket, output, HttpDate.Line);
        // As Kestrel (Http1MessageBody.For, HttpProtocol.CreateResponseHeaders): HTTP/1.1
        // keeps the connection unless the request says close; HTTP/1.0 only when it says
        // keep-alive and not close (RFC 9112 §9.3), and then the response says keep-alive.
        if (request.Close || (request.Http10 && !request.KeepAlive))
        {
            Put(socket, output, CloseLine);
            close = true;
        }
        else if (request.Http10)
        {
            Put(socket, output, KeepAliveLine);
        }

        Put(socket, output, "\r\n"u8);
        var bodyStart = partial ? range.Start : 0;
        var bodyBytes = partial ? range.Length : notModified || request.IsHead ? 0 : representation.Length;
        if (diskCopy is not null)
        {
            socket!.WriteBody(diskCopy, bodyStart, bodyBytes);
        }
        else if (bodyBytes != 0)
        {
            if (socket is not null && bodyBytes >= SocketOutput.DirectBodyMinimum)
            {
                // A copy in the page cache whose pages were evicted would make sendfile wait on
                // the disk: this body goes from memory, and the copy is written again meanwhile.
                var sealedCopy = blocks.SealedCopy(content!);
                if (sealedCopy is not null && !sealedCopy.IsResident())
                {
                    _ = sealedCopy.RefillAsync(content!);
                    sealedCopy = null;
                }

                socket.WriteBody(content!, sealedCopy, bodyStart, bodyBytes);
            }
            else if (output is TlsRecordWriter tls)
            {
                tls.WriteBody(content!, (int)bodyStart, (int)bodyBytes);
            }
            else
            {
                Put(socket, output, content!.AsSpan((int)bodyStart, (int)bodyBytes));
            }
        }

        written = bodyBytes + (notModified ? blocks.NotModified.Length : blocks.Ok.Length);

        var status = partial ? StatusCodes.Status206PartialContent : notModified ? StatusCodes.Status304NotModified : StatusCodes.Status200OK;
        _metrics.Served(status, bodyBytes, fromMemory: content is not null, ReferenceEquals(representation, entry.Identity) || notModified || partial ? 0 : entry.Identity.Length - representation.Length);
        _metrics.RequestDone(started, request.IsHead ? HttpMethods.Head : HttpMethods.Get, status, https, request.Http10 ? "1.0" : "1.1");
        return true;
    }

    // The standalone server's output, which is sealed, by direct calls; any other through the
    // PipeWriter.
    private static void Put(SocketOutput? socket, PipeWriter output, ReadOnlySpan<byte> bytes)
    {
        if (socket is not null)
        {
            socket.Append(bytes);
        }
        else
        {
            output.Write(bytes);
        }
    }

    /// <summary>
    /// A 206's head but the Date line and Connection: its status line, Content-Length and
    /// Content-Range (RFC 9110 §14.4), then the 200's fields, as the middleware's <c>SendRange</c>
    /// writes them.
    /// </summary>
    private static void PutPartialHead(SocketOutput? socket, PipeWriter output, ResponseBlocks blocks, ByteRange range, long length)
    {
        // Three numbers of at most 19 digits each, and the text around them.
        Span<byte> line = stackalloc byte[128];
        var at = 0;
        range.Length.TryFormat(line, out var written, default, CultureInfo.InvariantCulture);
        at += written;
        "\r\nContent-Range: bytes "u8.CopyTo(line[at..]);
        at += 23;
        range.Start.TryFormat(line[at..], out written, default, CultureInfo.InvariantCulture);
        at += written;
        line[at++] = (byte)'-';
        range.Last.TryFormat(line[at..], out written, default, CultureInfo.InvariantCulture);
        at += written;
        line[at++] = (byte)'/';
        length.TryFormat(line[at..], out written, default, CultureInfo.InvariantCulture);
        at += written;
        line[at++] = (byte)'\r';
        line[at++] = (byte)'\n';
        Put(socket, output, PartialLine);
        Put(socket, output, line[..at]);
        Put(socket, output, blocks.Ok.AsSpan(blocks.FieldsStart));
    }

    private bool IsReserved(ReadOnlySpan<char> path) => ((_reservedLengths >> (path.Length & 63)) & 1) != 0 && _reservedLookup.Contains(path);
}
