namespace Peregrine.Compression;

/// <summary>
/// Compression of files at index time: each compressible file is compressed once, at the best
/// ratio, and the result is served like any other bytes.
/// </summary>
public sealed class CompressionOptions
{
    /// <summary>Compress compressible files and serve sidecars (<c>app.js.br</c>). Default: <see langword="true"/>.</summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// The encodings to produce, by Content-Encoding token: <c>br</c>, <c>zstd</c>, <c>gzip</c>.
    /// Default: all three (zstd only where the system's libzstd can be loaded).
    /// </summary>
    public IList<string> Encodings { get; set; } = ["br", "zstd", "gzip"];

    /// <summary>
    /// A folder to keep compressed bytes in, keyed by content hash, so a restart does not
    /// compress unchanged files again. Default: none.
    /// </summary>
    public string? CacheDirectory { get; set; }
}
