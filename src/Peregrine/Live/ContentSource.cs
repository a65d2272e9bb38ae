using Microsoft.Extensions.Logging;
using Peregrine.Indexing;
using Peregrine.Sources;

namespace Peregrine.Live;

/// <summary>
/// Where one instance's files come from: its <see cref="PeregrineOptions.Root"/> as it stands, or
/// a copied source (a bucket) copied into a folder of the process's own, which then becomes the
/// root. The catalog indexes a folder either way, and knows nothing of buckets. This is the one
/// place the two meet: the copied source only reports a release (the callbacks given to
/// <see cref="ICopiedSource.Start"/>), and this turns each report into the catalog's start or
/// refresh, so that Live/ uses Sources/ and never the reverse (docs/architecture.md, "Folders").
/// </summary>
internal sealed class ContentSource : IDisposable
{
    private ContentSource(ICopiedSource? copied) => Copied = copied;

    /// <summary>The copied source (a bucket); null for a folder.</summary>
    public ICopiedSource? Copied { get; }

    /// <summary>
    /// The source <paramref name="options"/> name. For a bucket, made by <paramref name="buckets"/>
    /// (the Peregrine.AspNetCore.Buckets package), this makes the process's folder for the copy and
    /// sets <see cref="PeregrineOptions.Root"/> to its link,
    /// <see cref="PeregrineOptions.ListedLastModified"/> to its listed times and
    /// <see cref="PeregrineOptions.EarlierVersions"/> to its releases' earlier versions, before the catalog reads them.
    /// </summary>
    public static ContentSource For(PeregrineOptions options, IBucketSourceFactory? buckets, ILoggerFactory loggerFactory)
    {
        if (options.Bucket is not { } bucketOptions)
        {
            return new ContentSource(null);
        }

        // Validation reports this at start; an application that skipped it learns here.
        var factory = buckets ?? throw new InvalidOperationException(IBucketSourceFactory.NotAdded);
        // The bucket keeps the releases the compression dictionaries take earlier versions from
        // (docs/serving.md); only the core knows which files are fingerprinted.
        var dictionaries = options.Compression.Dictionaries;
        if (options.Compression.Enabled && dictionaries?.Enabled == true && options.FingerprintedNames)
        {
            var requestPath = options.RequestPath.Value ?? "";
            bucketOptions.EarlierReleases = Math.Max(0, dictionaries.MaxVersions - 1);
            bucketOptions.EarlierMaxBytes = dictionaries.MaxBytes;
            bucketOptions.DictionaryFiles = relative => DictionaryMatch.For(requestPath, "/" + relative) is not null;
        }

        var copied = factory.Create(bucketOptions, loggerFactory);
        options.Root = copied.RootLink;
        options.ListedLastModified = copied.ListedLastModified;
        options.EarlierVersions = copied.EarlierVersions;
        return new ContentSource(copied);
    }

    /// <summary>True while requests cannot be served yet and must not wait: the bucket has not been copied once.</summary>
    public bool Unavailable => Copied is { HasSynced: false };

    /// <summary>Starts indexing: at once for a folder, after the first copy for a bucket.</summary>
    public void Start(FileCatalog catalog)
    {
        if (Copied is { } copied)
        {
            // The catalog starts on the first release copied whole; each later release that
            // moved the link asks for a rescan now rather than at the root check. The version
            // the published snapshot serves is kept until the catalog has left it.
            copied.Start(firstRelease: catalog.Start, newRelease: catalog.RequestRefresh, rootInForce: () => catalog.Current?.Root);
        }
        else
        {
            catalog.Start();
        }
    }

    public void Dispose() => Copied?.Dispose();
}
