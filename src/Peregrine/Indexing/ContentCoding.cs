namespace Peregrine.Indexing;

/// <summary>The encoded variants that exist for one resource, beside its identity representation.</summary>
[Flags]
internal enum ContentCodingSet : byte
{
    None = 0,
    Brotli = 1,
    Zstd = 2,
    Gzip = 4,
}

/// <summary>The representation chosen for one response.</summary>
internal enum ContentCoding : byte
{
    Identity = 0,
    Brotli = 1,
    Zstd = 2,
    Gzip = 3,

    /// <summary>Zstandard against a dictionary the client holds (RFC 9842 §4.2); never a variant in <see cref="ContentCodingSet"/>.</summary>
    Dcz = 4,

    /// <summary>Brotli against a dictionary the client holds (RFC 9842 §4.1); as <see cref="Dcz"/>, never a variant.</summary>
    Dcb = 5,
}
