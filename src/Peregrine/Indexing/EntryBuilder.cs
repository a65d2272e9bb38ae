using System.Collections.Concurrent;
using Microsoft.Extensions.Logging;
using Peregrine.Interop;
using Peregrine.Logging;
using Peregrine.Sources;

namespace Peregrine.Indexing;

/// <summary>
/// Builds the entries of the files a scan found, second step of an index: reuses what has not
/// changed since the last snapshot, fills the memory budget smallest file first, then reads and
/// hashes the rest in parallel and makes every header value a response will need.
/// </summary>
internal sealed class EntryBuilder
{
    private static readonly string[] s_sidecarExtensions = [".br", ".zst", ".gz"];

    private readonly PeregrineOptions _options;
    private readonly MemoryBudget _budget;
    private readonly VersionCopies? _copies;
    private readonly ILogger _logger;
    private readonly ContentTypeMap _contentTypes;
    private readonly CachePolicy _cachePolicy;
    private readonly ConcurrentDictionary<long, string> _httpDates = new();

    /// <summary>True when files with fingerprinted names are offered as compression dictionaries (RFC 9842).</summary>
    private readonly bool _dictionaries;

    /// <summary>True when the files of the manifest's fingerprinted routes are offered as compression dictionaries.</summary>
    private readonly bool _routeDictionaries;

    public EntryBuilder(PeregrineOptions options, MemoryBudget budget, ILogger logger, VersionCopies? copies = null)
    {
        _options = options;
        _budget = budget;
        _copies = copies;
        _logger = logger;
        _contentTypes = new ContentTypeMap(options);
        _cachePolicy = new CachePolicy(options);
        // RFC 9842 §2: Use-As-Dictionary asks the browser to keep the file for a later delta,
        // which only libzstd can make here (dcz); without it the field would cost the browser
        // its storage and every later request an Available-Dictionary for nothing.
        _routeDictionaries = options.Compression.Enabled && options.Compression.Dictionaries?.Enabled == true && LibZstd.IsUsable;
        _dictionaries = options.FingerprintedNames && _routeDictionaries;
    }

    /// <summary>
    /// One entry per file, in the order of <paramref name="files"/>; <see langword="null"/> for
    /// a file that is not served (no content type) or could not be read. Entries of
    /// <paramref name="previous"/> whose file has the same path, length, modification time and
    /// sidecars are reused as they are (bytes, tags and variants).
    /// </summary>
    public CatalogEntry?[] Build(List<FoundFile> files, CatalogSnapshot? previous, CancellationToken cancellationToken, Func<FoundFile, bool>? isBeingWritten = null)
    {
        var results = new CatalogEntry?[files.Count];
        var fresh = new List<int>(previous is null ? files.Count : 0);
        var stamps = SidecarStamps(files);
        for (var i = 0; i < files.Count; i++)
        {
            var file = files[i];
            if (previous is not null
                && previous.TryFindFile(file.Relative, out var old)
                && old.IsFile
                && old.IsAt(file.Physical)
                && old.Identity.Length == file.Length
                && old.LastWriteTicks == file.LastWriteTicks
                && old.SidecarStamp == stamps.GetValueOrDefault(file.Relative))
            {
                results[i] = old;
            }
            else
            {
                fresh.Add(i);
            }
        }

        // The memory budget is filled smallest file first: small files are the most requested
        // on typical sites and gain the most from skipping the disk per request.
        fresh.Sort((a, b) => files[a].Length.CompareTo(files[b].Length));
        var cache = new bool[files.Count];
        foreach (var i in fresh)
        {
            if (files[i].Length > _options.MaxCachedFileSize || !_budget.TryReserve(files[i].Length))
            {
                break;
            }

            cache[i] = true;
        }

        var unsettled = 0;
        HelpedLoop.For(
            fresh.Count,
            k =>
            {
                var i = fresh[k];
                CatalogEntry? old = null;
                if (previous is not null && (isBeingWritten?.Invoke(files[i]) == true))
                {
                    // A writer still has the file open: the version indexed before stays.
                    previous.TryFind(files[i].Relative, out old);
                    results[i] = old is { IsFile: true } ? old : null;
                    Interlocked.Increment(ref unsettled);
                    if (cache[i])
                    {
                        _budget.Release(files[i].Length);
                    }

                    return;
                }

                results[i] = BuildAccounted(files[i], cache[i], stamps.GetValueOrDefault(files[i].Relative), out var settled);
                if (!settled)
                {
                    Interlocked.Increment(ref unsettled);
                    results[i] = previous is not null && previous.TryFind(files[i].Relative, out old) && old.IsFile ? old : null;
                }
            },
            cancellationToken);
        Unsettled = unsettled;
        return results;
    }

    /// <summary>
    /// Files the last <see cref="Build"/> left as they were indexed before (or out) because they
    /// were still being written: the caller looks at them again once they have settled.
    /// </summary>
    public int Unsettled { get; private set; }

    /// <summary>
    /// The entry of one file named by a change event, read now. <paramref name="settled"/> is false
    /// when the file changed while it was read (a writer is still at it); the entry is then
    /// <see langword="null"/> and the caller keeps the version it had. An entry equal to
    /// <paramref name="previous"/> (same bytes, length, time and sidecars) is returned as
    /// <paramref name="previous"/>, so it keeps its variants.
    /// </summary>
    public CatalogEntry? BuildOne(FoundFile file, CatalogEntry? previous, out bool settled)
    {
        var stamp = _options.Compression.Enabled ? SidecarStampOf(file.Physical) : 0;
        var cache = file.Length <= _options.MaxCachedFileSize && _budget.TryReserve(file.Length);
        var entry = BuildAccounted(file, cache, stamp, out settled);
        if (entry is not null && previous is { IsFile: true }
            && previous.LastWriteTicks == entry.LastWriteTicks && previous.Identity.Length != entry.Identity.Length)
        {
            // A new length under the old time: a truncation under way (the file system sets the
            // length before the time, and sends its event after both). Not a version.
            Discard(entry);
            settled = false;
            return null;
        }

        if (entry is not null && previous is { IsFile: true }
            && previous.Identity.Length == entry.Identity.Length
            && previous.LastWriteTicks == entry.LastWriteTicks
            && previous.LastModifiedTicks == entry.LastModifiedTicks
            && previous.SidecarStamp == entry.SidecarStamp
            && previous.IsAt(file.Physical)
            && string.Equals(previous.Identity.ContentTag, entry.Identity.ContentTag, StringComparison.Ordinal))
        {
            Discard(entry);
            return previous;
        }

        return entry;
    }

    /// <summary>Gives back what an entry that is not published after all holds: its bytes in memory, or its copy on disk.</summary>
    public void Discard(CatalogEntry entry)
    {
        _budget.Release(entry.Identity.Content?.Length ?? 0);
        DiscardCopy(entry.Identity);
    }

    private void DiscardCopy(Representation identity)
    {
        if (_copies is not null && _copies.Holds(identity.PhysicalPath))
        {
            _copies.Discard(identity.PhysicalPath!, identity.Length);
        }
    }

    /// <summary>Builds a file's entry and accounts for the memory it holds against the budget reserved for it.</summary>
    private CatalogEntry? BuildAccounted(FoundFile file, bool cache, long sidecarStamp, out bool settled)
    {
        var entry = BuildFile(file, cache, sidecarStamp, out settled);
        if (!settled)
        {
            entry = null;
        }

        if (cache)
        {
            // Account for what is held: nothing if the file was skipped, its new size if
            // it changed between the scan and the read.
            _budget.Release(file.Length);
            _budget.TryReserve(entry?.Identity.Content?.Length ?? 0);
        }

        return entry;
    }

    /// <summary>The sidecar stamp of one file, from an lstat(2) of each possible sidecar.</summary>
    private static long SidecarStampOf(string physical)
    {
        long stamp = 0;
        foreach (var extension in s_sidecarExtensions)
        {
            var facts = FileSystemProbe.Probe(physical + extension);
            if (facts.Kind == FileKind.Regular)
            {
                stamp += SidecarStamp(extension, facts.Length, facts.LastWriteTicks);
            }
        }

        return stamp;
    }

    /// <summary>One sidecar's share of a stamp; shares are added, so the order they are found in does not matter.</summary>
    private static long SidecarStamp(string extension, long length, long lastWriteTicks)
        => HashCode.Combine(extension, length, lastWriteTicks);

    /// <summary>
    /// For each file with precompressed sidecars (<c>app.js.br</c>, <c>.zst</c>, <c>.gz</c>),
    /// a stamp of their lengths and times: a file whose sidecar changed is rebuilt, so its
    /// variants are checked again, even if the file itself did not change.
    /// </summary>
    private Dictionary<string, long> SidecarStamps(List<FoundFile> files)
    {
        var stamps = new Dictionary<string, long>(StringComparer.Ordinal);
        if (!_options.Compression.Enabled)
        {
            return stamps;
        }

        foreach (var file in files)
        {
            foreach (var extension in s_sidecarExtensions)
            {
                if (file.Relative.EndsWith(extension, StringComparison.Ordinal))
                {
                    var source = file.Relative[..^extension.Length];
                    stamps[source] = stamps.GetValueOrDefault(source) + SidecarStamp(extension, file.Length, file.LastWriteTicks);
                }
            }
        }

        return stamps;
    }

    /// <summary>
    /// The Last-Modified value for a time, one string per second: the files of a deploy share a
    /// handful of seconds, so a million entries hold a few strings, not a million.
    /// </summary>
    private string HttpDateFor(long ticks)
    {
        var seconds = ticks - (ticks % TimeSpan.TicksPerSecond);
        return _httpDates.GetOrAdd(seconds, static s => new DateTimeOffset(s, TimeSpan.Zero).ToString("r"));
    }

    private CatalogEntry? BuildFile(FoundFile file, bool cache, long sidecarStamp, out bool settled)
    {
        settled = true;
        var contentType = _contentTypes.For(file.Name);
        if (contentType is null)
        {
            return null;
        }

        // The copy of this version, if one is made, and the length reserved for it.
        string? copy = null;
        long length = 0;
        try
        {
            // A file read whole in one call needs no read-ahead advice (one fadvise(2) less).
            using var handle = File.OpenHandle(file.Physical, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, cache ? FileOptions.None : FileOptions.SequentialScan);

            // Length and time come from the open file (one fstat(2)), so the bytes read and the
            // metadata recorded describe the same version even if the path is replaced meanwhile.
            var facts = FileSystemProbe.Probe(handle);
            length = facts.Length;
            var lastWrite = new DateTime(facts.LastWriteTicks, DateTimeKind.Utc);

            // A bucket's file linked from an earlier version keeps that version's time; the
            // listing's time is the one every replica agrees on (docs/deployment.md, "Serving
            // from a bucket").
            var lastModified = _options.ListedLastModified?.Invoke(file.Root, file.Relative[file.PrefixLength..]) ?? lastWrite.Ticks;
            Representation identity;
            FileFacts? after = null;
            if (cache)
            {
                var content = new byte[length];
                var read = 0;
                while (read < content.Length)
                {
                    var n = RandomAccess.Read(handle, content.AsSpan(read), read);
                    if (n == 0)
                    {
                        // Truncated while read: a writer is at work.
                        settled = false;
                        return null;
                    }

                    read += n;
                }

                // In memory: the entry knows the file's path for a re-read; the representation needs none.
                identity = new Representation(ContentCoding.Identity, length, EntityTag.Compute(content), content, physicalPath: null);
            }
            else
            {
                // Streamed from disk: from a private copy of this version where one can be made
                // (VersionCopies), so that a writer rewriting the file in place cannot change the
                // bytes a response is reading; the copy is taken under the same length and time
                // check as a read into memory, and it is the copy that is hashed, so the tag names
                // the bytes sent.
                copy = _copies?.TryCopy(handle, length, facts.LastWriteTicks);
                string etag;
                if (length > _options.MaxHashedFileSize)
                {
                    etag = EntityTag.FromMetadata(length, lastModified);
                }
                else if (copy is not null)
                {
                    using var stream = new FileStream(copy, FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0, FileOptions.SequentialScan);
                    etag = EntityTag.Compute(stream);
                }
                else
                {
                    using var stream = new FileStream(handle, FileAccess.Read, bufferSize: 0);
                    etag = EntityTag.Compute(stream);

                    // Before the stream closes the handle it was given.
                    after = FileSystemProbe.Probe(handle);
                }

                identity = new Representation(ContentCoding.Identity, length, etag, content: null, copy ?? file.Physical);
            }

            // The same length and time after the read as before it, or a writer was at work
            // meanwhile and the bytes may be half of one version and half of another.
            after ??= FileSystemProbe.Probe(handle);
            if (after.Value.Length != length || after.Value.LastWriteTicks != facts.LastWriteTicks)
            {
                settled = false;
                DiscardCopy(identity);
                return null;
            }

            var cacheControl = _cachePolicy.For(file.Relative, file.Name);
            // A file the manifest states encodings for is offered in them whatever its type, as
            // MapStaticAssets offers it (unless Peregrine's own variants are preferred).
            // A file the manifest names as an encoding of another (/app.css.br) is sent as it is,
            // under its route's Content-Encoding: it is never encoded again.
            var statedEncodings = _options.Routes.EncodingsFor(file.Relative);
            var stated = _options.Routes.StatedFor(file.Relative);
            var negotiable = _options.Compression.Enabled && stated?.IsEncodedFile != true
                && ((statedEncodings is not null && _options.Compression.ManifestEncodings == ManifestEncodingPolicy.AsStated) || Compressibility.IsCompressible(contentType));

            // RFC 9842: a fingerprinted asset is offered as the dictionary for its next version.
            // A file the static web assets answer under a route the manifest says is
            // fingerprinted is kept under that route's pattern, and only that route announces it
            // (RouteEntries); its own route does not, unless it is that route (a name on disk
            // that carries the fingerprint), and its stated encodings stay what a client
            // without a dictionary gets. Any other file the manifest names is never judged by
            // its name: its route states its own tags and encodings.
            var requestPath = _options.RequestPath.Value ?? "";
            var fingerprinted = _options.Routes.FingerprintedRouteOf(file.Relative);
            string? dictionaryMatch = null;
            if (negotiable && fingerprinted is { Fingerprint: { } fingerprint } route && _routeDictionaries)
            {
                dictionaryMatch = DictionaryMatch.ForRoute(route.Path, fingerprint) is { } pattern ? DictionaryMatch.Under(requestPath, pattern) : null;
            }
            else if (negotiable && fingerprinted is null && _dictionaries && stated is null && statedEncodings is null)
            {
                dictionaryMatch = DictionaryMatch.For(requestPath, file.Relative);
            }

            return CatalogEntry.ForFile(file.Relative, file.Root, file.PrefixLength, file.Physical, identity, contentType, lastWrite.Ticks, HttpDateFor(lastModified), cacheControl, negotiable, sidecarStamp, stated, statedEncodings, lastModified, dictionaryMatch,
                announcesDictionary: fingerprinted is not { } fingerprintedRoute || string.Equals(fingerprintedRoute.Path, file.Relative, StringComparison.Ordinal));
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            if (copy is not null)
            {
                _copies!.Discard(copy, length);
            }

            PeregrineLog.Unreadable(_logger, file.Physical, ex.Message);
            return null;
        }
    }
}
