namespace Peregrine;

/// <summary>
/// Compression dictionaries (RFC 9842): a fingerprinted asset (<c>app-3f9a1c2b.js</c>) is
/// marked <c>Use-As-Dictionary</c>, earlier versions of it are kept in memory (and saved in the
/// compression cache folder, when there is one), and a browser
/// that holds one of them gets the new version as a delta against it (<c>Content-Encoding: dcz</c>).
/// Part of <see cref="CompressionOptions"/>: it needs compression on and libzstd.
/// </summary>
public sealed class DictionaryOptions
{
    /// <summary>
    /// Mark fingerprinted assets as dictionaries and serve deltas against earlier versions.
    /// Default: <see langword="true"/>. Only files named with a fingerprint
    /// (<see cref="PeregrineOptions.FingerprintedNames"/>) take part.
    /// </summary>
    public bool Enabled { get; set; } = true;

    /// <summary>
    /// How many versions of each asset are kept to make deltas against, the one in force
    /// included. Default: 4, the current release and the three before it: a returning visitor
    /// who missed more releases than that gets the ordinary coding.
    /// </summary>
    public int MaxVersions { get; set; } = 4;

    /// <summary>
    /// The most bytes the kept versions hold together, within
    /// <see cref="PeregrineOptions.MemoryBudget"/> (which the deltas are reserved from too).
    /// Default: 64 MiB. The oldest versions go first when a new one does not fit; a version
    /// larger than this is not kept.
    /// </summary>
    public long MaxBytes { get; set; } = 64L * 1024 * 1024;
}
