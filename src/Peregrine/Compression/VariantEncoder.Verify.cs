using System.Buffers;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Compression;

/// <summary>
/// Reading an encoded file made elsewhere (a sidecar, or a cache file from an earlier run) and
/// checking that it decodes to exactly the entry's bytes before it may be served.
/// </summary>
internal sealed partial class VariantEncoder
{
    private const int DecodeBufferSize = 64 * 1024;

    /// <summary>
    /// Reads an encoded file (sidecar or cache), checking it decodes to exactly the entry's
    /// bytes; in memory when the entry is and the budget allows, else served from the file.
    /// <see langword="null"/> with the reason when it is unusable.
    /// </summary>
    private Representation? LoadVerified(EntryWork work, ContentCoding coding, string path, long length, out string? reason)
    {
        var inMemory = work.Entry.Identity.Content is not null && _budget.TryReserve(length);
        var kept = false;
        try
        {
            byte[]? bytes = null;
            Stream stream;
            if (inMemory)
            {
                bytes = File.ReadAllBytes(path);
                stream = new MemoryStream(bytes, writable: false);
            }
            else
            {
                stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, DecodeBufferSize, FileOptions.SequentialScan);
            }

            string? etag;
            long encodedLength;
            using (stream)
            {
                etag = Verify(work, coding, stream, out reason, out encodedLength);
            }

            if (etag is null)
            {
                return null;
            }

            if (encodedLength != length)
            {
                reason = "changed while it was read";
                return null;
            }

            kept = true;
            return new Representation(coding, length, etag, bytes, bytes is null ? path : null);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            reason = $"cannot be read ({ex.Message})";
            return null;
        }
        finally
        {
            if (inMemory && !kept)
            {
                _budget.Release(length);
            }
        }
    }

    /// <summary>
    /// Decodes <paramref name="encoded"/> and compares the result with the entry's ETag (a
    /// SHA-256 of its bytes), returning the ETag of the encoded bytes, or <see langword="null"/>
    /// with the reason. Decoding stops one byte past the file's length, so a sidecar built to
    /// expand without end (a decompression bomb) costs no more than the file it claims to be.
    /// </summary>
    private static string? Verify(EntryWork work, ContentCoding coding, Stream encoded, out string? reason, out long encodedLength)
    {
        encodedLength = 0;
        var limit = work.Entry.Identity.Length;
        using var hashing = new HashingReadStream(encoded);
        using var decodedHash = new ContentHash.Incremental(limit);
        var buffer = ArrayPool<byte>.Shared.Rent(DecodeBufferSize);
        try
        {
            long total = 0;
            using (var decoder = Encoders.OpenDecoder(coding, hashing))
            {
                int read;
                while ((read = decoder.Read(buffer, 0, (int)Math.Min(buffer.Length, limit + 1 - total))) > 0)
                {
                    total += read;
                    if (total > limit)
                    {
                        reason = "decodes to more bytes than the file holds";
                        return null;
                    }

                    decodedHash.Append(buffer.AsSpan(0, read));
                }
            }

            if (total != limit)
            {
                reason = "decodes to fewer bytes than the file holds";
                return null;
            }

            if (EntityTag.FromHash(decodedHash.Finish()) != work.IdentityTag)
            {
                reason = "decodes to different bytes than the file holds";
                return null;
            }
        }
        catch (InvalidDataException ex)
        {
            reason = $"is not valid {Encoders.Token(coding)} data ({ex.Message})";
            return null;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        // The ETag covers every byte that will be sent, including any a decoder stopped short of.
        var etag = EntityTag.FromHash(hashing.DrainAndHash());
        encodedLength = hashing.BytesRead;
        reason = null;
        return etag;
    }
}
