using System.Security.Cryptography;

namespace Peregrine.Compression;

/// <summary>
/// Passes reads through and hashes every byte read, so one pass over a sidecar or cache file
/// both checks what it decodes to and gives the ETag of the bytes that will be sent.
/// </summary>
internal sealed class HashingReadStream : ReadOnlyStream
{
    private readonly Stream _inner;
    private readonly IncrementalHash _hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);

    public HashingReadStream(Stream inner)
    {
        _inner = inner;
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

        return _hash.GetHashAndReset();
    }

    public override int Read(Span<byte> buffer)
    {
        var read = _inner.Read(buffer);
        _hash.AppendData(buffer[..read]);
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
