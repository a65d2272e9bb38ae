using Peregrine.Indexing;

namespace Peregrine.Compression;

/// <summary>
/// Passes reads through and hashes every byte read, so one pass over a sidecar or cache file
/// both checks what it decodes to and gives the ETag of the bytes that will be sent.
/// </summary>
internal sealed class HashingReadStream : ReadOnlyStream
{
    private readonly Stream _inner;
    private readonly ContentHash.Incremental _hash;

    public HashingReadStream(Stream inner)
    {
        _inner = inner;
        _hash = new ContentHash.Incremental(inner.CanSeek ? inner.Length - inner.Position : 0);
    }

    /// <summary>The bytes read so far.</summary>
    public long BytesRead { get; private set; }

    /// <summary>Reads to the end (bytes a decoder stopped short of are still sent) and returns the SHA-256 of everything read.</summary>
    public byte[] DrainAndHash()
    {
        Span<byte> buffer = stackalloc byte[4096];
        while (Read(buffer) > 0)
        {
        }

        return _hash.Finish();
    }

    public override int Read(Span<byte> buffer)
    {
        var read = _inner.Read(buffer);
        _hash.Append(buffer[..read]);
        BytesRead += read;
        return read;
    }

    protected override void Dispose(bool disposing)
    {
        if (disposing)
        {
            _hash.Dispose();
        }

        base.Dispose(disposing);
    }
}
