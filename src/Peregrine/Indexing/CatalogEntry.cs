using Microsoft.Extensions.Primitives;
using Peregrine.StaticWebAssets;

namespace Peregrine.Indexing;

/// <summary>
/// What a request path resolves to: a file with its representations, a folder's listing, or a
/// directory that redirects to its slash-terminated form. Immutable once published in a
/// snapshot but for one slot, <see cref="Encoded"/>: the variants made after the index, written
/// once by the stage that makes them (compression) and read by every request after. A slot on
/// the entry rather than a table beside it, so that a request finds them without a second lookup.
/// </summary>
internal sealed partial class CatalogEntry : IServedFile
{
    private CatalogEntry(string relativePath)
    {
        RelativePath = relativePath;
    }

    /// <summary>The path under the root, with a leading slash, as indexed.</summary>
    public string RelativePath { get; }

    /// <summary>
    /// The resolved file the bytes come from; empty for a directory redirect. Made on each call
    /// from the mount's folder and <see cref="RelativePath"/> unless the file was reached through a link:
    /// a file held in memory then keeps no second copy of its path (about 140 bytes an entry).
    /// A file read from disk keeps one, in its identity <see cref="Representation.PhysicalPath"/>.
    /// </summary>
    public string PhysicalPath => _physicalPath ?? (_root is null ? "" : string.Concat(_root, RelativePath.AsSpan(_prefixLength)));

    /// <summary>The folder of the file's mount as indexed, shared by every entry of that mount.</summary>
    private string? _root;

    /// <summary>The length of the mount's URL prefix (<c>/docs</c>) that <see cref="RelativePath"/> starts with; 0 at the site root.</summary>
    private int _prefixLength;

    /// <summary>The file's path when it is not <c>root + RelativePath</c> (a link resolved elsewhere under the root).</summary>
    private string? _physicalPath;

    /// <summary>True when this entry's bytes come from <paramref name="physicalPath"/>; allocates nothing.</summary>
    public bool IsAt(string physicalPath)
        => _physicalPath is not null
            ? _physicalPath == physicalPath
            : _root is not null && IsUnder(physicalPath, _root, RelativePath.AsSpan(_prefixLength));

    /// <summary>True when the file was reached through a symbolic link (its bytes live at another path).</summary>
    public bool IsLinked => _physicalPath is not null;

    private static bool IsUnder(string physicalPath, string root, ReadOnlySpan<char> relativePath)
        => physicalPath.Length == root.Length + relativePath.Length
            && physicalPath.StartsWith(root, StringComparison.Ordinal)
            && physicalPath.EndsWith(relativePath, StringComparison.Ordinal);

    public Representation Identity { get; private init; } = null!;

    public StringValues ContentType { get; private init; }

    /// <summary>
    /// The Last-Modified time in whole seconds: HTTP dates have one-second resolution (RFC 9110
    /// §5.6.7), and comparing against a sub-second time would make every If-Modified-Since and
    /// If-Range date look older than the file.
    /// </summary>
    public DateTimeOffset LastModified => new(LastModifiedTicks - (LastModifiedTicks % TimeSpan.TicksPerSecond), TimeSpan.Zero);

    /// <summary>
    /// The time Last-Modified states, to the tick: the file's modification time, or the time its
    /// source lists for it (<see cref="PeregrineOptions.ListedLastModified"/>), which may differ
    /// from the file's when the file is shared with an earlier version.
    /// </summary>
    public long LastModifiedTicks { get; private init; }

    /// <summary>Lengths and times of the file's precompressed sidecars at index, combined; 0 without any.</summary>
    public long SidecarStamp { get; private init; }

    /// <summary>The file's modification time at index, to the tick: how a changed file is recognised.</summary>
    public long LastWriteTicks { get; private init; }

    public StringValues LastModifiedHeader { get; private init; }

    public StringValues CacheControl { get; private init; }

    /// <summary>
    /// For a directory: the encoded path, slash-terminated, that a request without the slash
    /// is redirected to. <see langword="null"/> for a file.
    /// </summary>
    public string? RedirectPath { get; private init; }

    public bool IsRedirect => RedirectPath is not null;

    /// <summary>
    /// The redirect's status: 301 for a folder without its slash (RFC 9110 §15.4.2), 308 for a
    /// page's <c>.html</c> name under clean URLs (§15.4.9: permanent, and the method is kept).
    /// </summary>
    public int RedirectStatus { get; private init; }

    /// <summary>
    /// For a clean-URL redirect (<c>/about.html</c> to <c>/about</c>): the file entry it stands
    /// in for, which the index holds under the clean path. Null otherwise.
    /// </summary>
    public CatalogEntry? Canonical { get; private init; }

    /// <summary>True for a file; false for a redirect or a listing, which have no representation.</summary>
    public bool IsFile => RedirectPath is null && Listing is null;

    /// <summary>
    /// True when encoded variants may be offered for this file: its responses then always carry
    /// <c>Vary: Accept-Encoding</c>, before and after the variants are ready (RFC 9110 §12.5.5).
    /// </summary>
    public bool Negotiable { get; private init; }

    /// <summary>
    /// The encoded files a static web assets manifest states for this file, which compression
    /// serves instead of its own while they decode to the file's bytes; <see langword="null"/>
    /// for most files.
    /// </summary>
    public IReadOnlyList<StatedEncoding>? StatedEncodings { get; private init; }

    /// <summary>
    /// True when responses carry <c>Vary: Accept-Encoding</c>: a negotiable file, or one whose
    /// static web assets route states that Vary, as MapStaticAssets sends it.
    /// </summary>
    public bool VariesByEncoding { get; private init; }

    /// <summary>
    /// The encoded variants once they are made; <see langword="null"/> until then, when the
    /// identity bytes are sent.
    /// </summary>
    public EncodedVariants? Encoded => _aliasOf is null && _stated is null ? Volatile.Read(ref _encoded) : StatedEncoded();

    private EncodedVariants? _encoded;

    /// <summary>Where a request for this entry is reported while its first variants are being made; null otherwise.</summary>
    private EncodingDemand? _demand;

    /// <summary>
    /// Publishes the variants; requests from now on may select them. The first variants may be
    /// replaced once by better ones (compression makes a fast pass, then a final one), each
    /// with its own ETag: a request reads the slot once and sees one consistent set.
    /// </summary>
    public void PublishEncoded(EncodedVariants variants)
    {
        if (_aliasOf is { } target)
        {
            target.PublishEncoded(variants);
            return;
        }

        Volatile.Write(ref _encoded, variants);
        Volatile.Write(ref _demand, null);
    }

    /// <summary>
    /// For a fingerprinted asset offered as a compression dictionary (RFC 9842): its
    /// <c>match</c> pattern (<see cref="Indexing.DictionaryMatch"/>), which names the asset
    /// across versions; <see langword="null"/> for every other entry.
    /// </summary>
    public string? DictionaryMatch { get; private init; }

    /// <summary>The <c>Use-As-Dictionary</c> value of <see cref="DictionaryMatch"/>; empty without one.</summary>
    public StringValues UseAsDictionary { get; private init; }

    /// <summary>
    /// The deltas a request for this entry may select: those of its file, once made, when the
    /// entry announces <see cref="UseAsDictionary"/>; <see langword="null"/> until then, and for
    /// an entry that announces none. A file the static web assets answer under a fingerprinted
    /// route has its versions kept and its deltas made, but only that route sends them: its
    /// own, unfingerprinted route (<c>/css/site.css</c>, <c>no-cache</c>) is no dictionary a
    /// browser was told to keep, and so no URL a browser sends Available-Dictionary for.
    /// </summary>
    public DictionaryDeltas? Deltas => UseAsDictionary.Count == 0 ? null : (_aliasOf ?? this).MadeDeltas;

    /// <summary>
    /// The deltas of this file's version against earlier ones, once made; <see langword="null"/>
    /// until then, and for an entry that is no dictionary. Written and read by compression.
    /// </summary>
    public DictionaryDeltas? MadeDeltas => Volatile.Read(ref _deltas);

    private DictionaryDeltas? _deltas;

    /// <summary>Publishes the deltas; requests from now on may select them.</summary>
    public void PublishDeltas(DictionaryDeltas? deltas) => Volatile.Write(ref _deltas, deltas);

    /// <summary>Asks for a request for this entry to be reported to <paramref name="demand"/> until variants are published.</summary>
    public void ReportDemandTo(EncodingDemand demand) => Volatile.Write(ref _demand, demand);

    /// <summary>
    /// Reports that a request wanted this entry encoded and found no variants yet; at most
    /// once per entry, with one read when there is nothing to report and one interlocked
    /// exchange the first time: cheap enough for every request, and allocation-free.
    /// </summary>
    public void ReportDemand()
    {
        if (_aliasOf is { } target)
        {
            target.ReportDemand();
            return;
        }

        if (Volatile.Read(ref _demand) is not null && Interlocked.Exchange(ref _demand, null) is { } demand)
        {
            demand.Requested(this);
        }
    }

    public static CatalogEntry ForFile(
        string relativePath,
        string root,
        int prefixLength,
        string physicalPath,
        Representation identity,
        string contentType,
        long lastWriteTicks,
        string lastModifiedHeader,
        string cacheControl,
        bool negotiable,
        long sidecarStamp = 0,
        StatedHeaders? stated = null,
        IReadOnlyList<StatedEncoding>? statedEncodings = null,
        long? lastModifiedTicks = null,
        string? dictionaryMatch = null,
        bool announcesDictionary = true)
    {
        return new CatalogEntry(relativePath)
        {
            _stated = stated is { Encodings.Count: > 0 } ? stated : null,
            StatedEncodings = statedEncodings,
            VariesByEncoding = negotiable || stated?.VariesByEncoding == true,
            LastWriteTicks = lastWriteTicks,
            LastModifiedTicks = lastModifiedTicks ?? lastWriteTicks,
            _root = root,
            _prefixLength = prefixLength,
            _physicalPath = IsUnder(physicalPath, root, relativePath.AsSpan(prefixLength)) ? null : physicalPath,
            Identity = SentAs(stated?.ETag is { } tag && EntityTag.SameContent(identity.ContentTag, tag) ? identity.WithTag(tag) : identity, stated),
            ContentType = stated?.ContentType ?? contentType,
            LastModifiedHeader = lastModifiedHeader,
            CacheControl = cacheControl.Length == 0 ? StringValues.Empty : cacheControl,
            Negotiable = negotiable,
            SidecarStamp = sidecarStamp,
            DictionaryMatch = negotiable ? dictionaryMatch : null,
            UseAsDictionary = negotiable && announcesDictionary && dictionaryMatch is not null ? Indexing.DictionaryMatch.FieldValue(dictionaryMatch) : StringValues.Empty,
        };
    }

    /// <summary>
    /// <paramref name="identity"/>, sent with the Content-Encoding its route states when the file
    /// is itself an encoded one (<c>/app.css.br</c>): MapStaticAssets answers such a route with the
    /// stored bytes and <c>Content-Encoding: br</c> whatever the request accepts.
    /// </summary>
    private static Representation SentAs(Representation identity, StatedHeaders? stated)
        => stated?.ContentEncoding is { } coding ? identity.SentAsEncoded(coding) : identity;

    /// <summary>For a folder without a default document, when listings are on: its children, sorted.</summary>
    public SortedViews? Listing { get; private init; }

    /// <summary>For a listing: the encoded path under the mount point, slash-terminated.</summary>
    public string? ListingPath { get; private init; }

    public static CatalogEntry ForListing(string relativePath, string encodedPath, SortedViews children)
    {
        return new CatalogEntry(relativePath) { Listing = children, ListingPath = encodedPath };
    }

    public static CatalogEntry ForDirectoryRedirect(string relativePath, string redirectPath)
    {
        return new CatalogEntry(relativePath) { RedirectPath = redirectPath, RedirectStatus = 301 };
    }

    /// <summary>The redirect from a page's own path to its clean URL, standing in for <paramref name="file"/>.</summary>
    public static CatalogEntry ForCleanUrlRedirect(CatalogEntry file, string redirectPath)
    {
        return new CatalogEntry(file.RelativePath) { RedirectPath = redirectPath, RedirectStatus = 308, Canonical = file };
    }

    string IServedFile.Path => RelativePath;

    long IServedFile.Length => Identity.Length;

    string IServedFile.ContentType => ContentType.ToString();
}
