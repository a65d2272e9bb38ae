namespace Peregrine;

/// <summary>
/// Compression of files in the background once they are indexed: each compressible file is
/// compressed once, at the best ratio, and the result is served like any other bytes.
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
    /// compress unchanged files again. Default: none. It is created if missing. Files read back
    /// from it are checked (they must decode to the file's bytes) before they are served, but
    /// once checked they are sent as they are: the folder must be writable only by the server.
    /// </summary>
    public string? CacheDirectory { get; set; }

    /// <summary>
    /// How many files are compressed at once, in the background. Default: 0, meaning one fewer
    /// than the processor count (at least one), so that a core stays free for requests while a
    /// large site is compressed after start-up.
    /// </summary>
    public int MaxParallelism { get; set; }

    /// <summary>
    /// Files larger than this are not compressed (their sidecars are still served). Default:
    /// 64 MiB. A file is compressed from a whole copy in memory, so each worker may briefly hold
    /// this much plus its compressed form; Brotli at quality 11 also takes over a second per
    /// megabyte, which is why larger files are left alone.
    /// </summary>
    public long MaxFileSize { get; set; } = 64L * 1024 * 1024;

    /// <summary>
    /// What a file that the static web assets endpoints manifest states encodings for
    /// (an instance that serves an ASP.NET Core app's web root) is served with. Default:
    /// <see cref="ManifestEncodingPolicy.AsStated"/>, the manifest's encoded files, chosen as
    /// <c>MapStaticAssets</c> chooses them, so that the answers match the stock app's. Like all
    /// compression, it needs <see cref="Enabled"/> and at least one of <see cref="Encodings"/>.
    /// </summary>
    public ManifestEncodingPolicy ManifestEncodings { get; set; } = ManifestEncodingPolicy.AsStated;

    /// <summary>
    /// Compression dictionaries (RFC 9842): deltas of fingerprinted assets against the versions
    /// a browser already holds. Default: on (<see cref="DictionaryOptions"/>).
    /// </summary>
    public DictionaryOptions Dictionaries { get; set; } = new();
}

/// <summary>Which encodings serve a file the static web assets endpoints manifest states encodings for.</summary>
public enum ManifestEncodingPolicy
{
    /// <summary>
    /// The manifest's encoded files under the manifest's ETags, negotiated as
    /// <c>MapStaticAssets</c> negotiates them, while each still decodes to the file's bytes; after
    /// an edit, Peregrine's own variants under its own tags.
    /// </summary>
    AsStated = 0,

    /// <summary>
    /// Peregrine's own variants (Brotli at its highest quality, zstd, gzip), as for any other file:
    /// usually smaller than the build's, but with other ETags and lengths than MapStaticAssets sends.
    /// </summary>
    PreferOwn = 1,
}
