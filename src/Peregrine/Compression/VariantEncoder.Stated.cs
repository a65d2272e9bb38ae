using Peregrine.Indexing;
using Peregrine.Sources;
using Peregrine.StaticWebAssets;

namespace Peregrine.Compression;

/// <summary>
/// The encoded files a static web assets manifest states for a file (<see cref="CatalogEntry.StatedEncodings"/>),
/// served instead of Peregrine's own variants, as MapStaticAssets serves them: exactly the
/// codings the manifest lists, whatever they save (a tiny file gets a gzip larger than it). Each
/// must decode to the file's current bytes, the check any sidecar gets; when one does not (the
/// file was edited since the build, the build's copy is missing) the manifest no longer
/// describes the file, and Peregrine's own variants are made instead, under its own tags.
/// </summary>
internal sealed partial class VariantEncoder
{
    private EncodedVariants? FromManifest(EntryWork work, IReadOnlyList<StatedEncoding> stated)
    {
        var made = new Representation?[4];
        var preference = new double[4];
        foreach (var encoding in stated)
        {
            // A coding Peregrine cannot decode cannot be checked, so it is not served; the
            // SDK writes only br and gzip.
            if (!Encoders.TryParse(encoding.Coding, out var coding) || (coding == ContentCoding.Zstd && !Zstd.IsAvailable) || made[(int)coding] is not null)
            {
                continue;
            }

            string? reason = null;
            var variant = encoding.File is { } path ? LoadStated(work, coding, path, out reason) : null;
            if (variant is null)
            {
                CompressionLog.StatedFileUnusable(_logger, work.Entry.PhysicalPath, encoding.Coding, encoding.File ?? "", reason ?? "is not where the host's manifests say");
                Release(made);
                return null;
            }

            made[(int)coding] = variant;
            preference[(int)coding] = encoding.Quality;
        }

        const int B = (int)ContentCoding.Brotli, Z = (int)ContentCoding.Zstd, G = (int)ContentCoding.Gzip;
        return made[B] is null && made[Z] is null && made[G] is null
            ? null
            : new EncodedVariants(made[B], made[Z], made[G], new EncodingPreference(preference[B], preference[Z], preference[G]));
    }

    private Representation? LoadStated(EntryWork work, ContentCoding coding, string path, out string? reason)
    {
        var file = FileSystemProbe.Probe(path);
        switch (file.Kind)
        {
            case FileKind.Regular:
                return LoadVerified(work, coding, path, file.Length, out reason);
            case FileKind.Missing:
                reason = "does not exist";
                return null;
            default:
                // Opening a FIFO would block this worker for good.
                reason = "is not a regular file";
                return null;
        }
    }
}
