using Microsoft.Extensions.FileSystemGlobbing;

namespace Peregrine.StaticWebAssets;

/// <summary>A folder served under a URL path, as the runtime manifest names it: all of it, or only <see cref="Files"/>.</summary>
/// <param name="UrlPath">The URL path it is served under: <c>/</c>, <c>/_content/Lib</c>.</param>
/// <param name="Root">The folder, absolute, without a trailing separator.</param>
/// <param name="Files">The only paths under <paramref name="Root"/> served (leading slash), or <see langword="null"/> for all.</param>
internal sealed record AssetMount(string UrlPath, string Root, IReadOnlyList<string>? Files);

/// <summary>A URL whose file is served under another name: <c>/_content/Lib/Lib.h77jbnbuq3.bundle.scp.css</c> is <c>Lib.bundle.scp.css</c> on disk.</summary>
/// <param name="Path">The URL path the manifest gives (leading slash).</param>
/// <param name="Target">The URL path the file is indexed under, in the same URL folder, with its name on disk.</param>
internal readonly record struct AssetRename(string Path, string Target);

/// <summary>
/// The runtime manifest read as Peregrine serves it (see <see cref="RuntimeManifestDocument"/>):
/// a list of folders to mount, and the URLs whose name differs from the file's.
/// </summary>
/// <remarks>
/// A <c>**</c> pattern at a node mounts that content root at the node's path (a class library's
/// <c>wwwroot</c> at <c>/_content/Lib</c>). A single file (<c>Asset</c>) mounts the folder that
/// holds it with that one name in <see cref="AssetMount.Files"/>, so that a content root such as
/// the project folder (<c>Components/Layout/ReconnectModal.razor.js</c>) or the package cache
/// serves only what the manifest lists. Files already reached through a pattern are not mounted
/// twice. The build's compressed copies (<c>app.css.gz</c> beside <c>app.css</c>) are
/// encodings of the file beside them, which the endpoints manifest offers through
/// Accept-Encoding; where each one lies is kept in <see cref="EncodedFiles"/>, so that those
/// encodings can be served while they still decode to the file (an edit makes them stale, and
/// Peregrine's own variants take over). The manifest also names each as a URL of its own, which
/// MapStaticAssets answers with the stored bytes: each is mounted as a single file under its
/// generated name in <c>obj/</c>, and renamed to its URL (<see cref="Renames"/>).
/// </remarks>
internal sealed class RuntimeManifest
{
    private static readonly string[] s_encodedExtensions = [".gz", ".br", ".zst"];

    private RuntimeManifest(List<AssetMount> mounts, List<AssetRename> renames, Dictionary<string, string> encodedFiles)
    {
        Mounts = mounts;
        Renames = renames;
        EncodedFiles = encodedFiles;
    }

    /// <summary>
    /// The folders to serve, in precedence order for mounts at the same URL path: single files
    /// before patterns, as ASP.NET Core's manifest provider takes a node's own asset before its
    /// patterns; then in the order of the manifest's content roots.
    /// </summary>
    public IReadOnlyList<AssetMount> Mounts { get; }

    public IReadOnlyList<AssetRename> Renames { get; }

    /// <summary>The build's compressed copies by URL path (<c>/app.css.gz</c>): the file each one is, absolute.</summary>
    public IReadOnlyDictionary<string, string> EncodedFiles { get; }

    /// <summary>Reads the manifest at <paramref name="path"/>; throws <see cref="InvalidDataException"/> naming the file when it is not one.</summary>
    public static RuntimeManifest Load(string path)
    {
        using var stream = File.OpenRead(path);
        return Parse(stream, path);
    }

    public static RuntimeManifest Parse(Stream json, string source)
    {
        var document = ManifestReader.Read(json, ManifestJsonContext.Default.RuntimeManifestDocument, "static web assets manifest", source);

        if (document?.ContentRoots is not { } roots || document.Root is not { } root)
        {
            throw new InvalidDataException($"The static web assets manifest '{source}' has no ContentRoots or no Root.");
        }

        var reader = new Reader(roots.Select(TrimSeparator).ToList(), source);
        reader.Walk(root, "", []);
        return new RuntimeManifest(reader.Result(), reader.Renames, reader.EncodedFiles);
    }

    private static string TrimSeparator(string folder)
        => folder.Length > 1 ? folder.TrimEnd('/', '\\') : folder;

    /// <summary>One walk over the tree, collecting mounts as it goes.</summary>
    private sealed class Reader(List<string> roots, string source)
    {
        // Mounts of whole roots, and of single files grouped by (URL folder, disk folder), each
        // in the order first met.
        private readonly List<AssetMount> _patterns = [];
        private readonly Dictionary<(string UrlPath, string Root), List<string>> _files = [];
        private readonly List<(string UrlPath, string Root)> _fileOrder = [];

        public List<AssetRename> Renames { get; } = [];

        public Dictionary<string, string> EncodedFiles { get; } = new(StringComparer.Ordinal);

        public List<AssetMount> Result()
        {
            var mounts = new List<AssetMount>(_fileOrder.Count + _patterns.Count);
            foreach (var key in _fileOrder)
            {
                mounts.Add(new AssetMount(key.UrlPath, key.Root, _files[key]));
            }

            mounts.AddRange(_patterns);

            // Longest URL path first is how the index decides anyway; sorting here (stably) keeps
            // the list readable and its order meaningful only among equal paths.
            return [.. mounts.OrderByDescending(m => m.UrlPath.Length)];
        }

        /// <param name="node">The node at <paramref name="urlPath"/>.</param>
        /// <param name="urlPath">The node's URL path, leading slash; empty for the root.</param>
        /// <param name="covering">The <c>**</c> patterns of this node's ancestors: (URL path, content root index).</param>
        public void Walk(RuntimeManifestNode node, string urlPath, List<(string UrlPath, int Root)> covering)
        {
            if (node.Patterns is { Count: > 0 } patterns)
            {
                covering = [.. covering];
                foreach (var pattern in patterns)
                {
                    var root = RootAt(pattern.ContentRootIndex);
                    if (pattern.Pattern is null or "**")
                    {
                        _patterns.Add(new AssetMount(urlPath.Length == 0 ? "/" : urlPath, root, null));
                        covering.Add((urlPath, pattern.ContentRootIndex));
                    }
                    else if (Directory.Exists(root))
                    {
                        // Another glob (the SDK writes none today): the files it matches now.
                        // Files added later under such a root are not picked up.
                        var matcher = new Matcher(StringComparison.Ordinal);
                        matcher.AddInclude(pattern.Pattern);
                        foreach (var file in matcher.GetResultsInFullPath(root))
                        {
                            var sub = Path.GetRelativePath(root, file).Replace('\\', '/');
                            AddFile(urlPath + "/" + sub, root, sub);
                        }
                    }
                }
            }

            if (node.Children is not { } children)
            {
                return;
            }

            foreach (var (name, child) in children)
            {
                if (name.Length == 0 || name is "." or ".." || name.Contains('/') || name.Contains('\\'))
                {
                    throw new InvalidDataException($"The static web assets manifest '{source}' names a path segment '{name}' under '{urlPath}/'.");
                }

                var childPath = urlPath + "/" + name;
                if (child.Asset is { } encoded && IsEncodedCopy(name, children))
                {
                    var sub = PlainSubPath(childPath, encoded.SubPath ?? "");
                    EncodedFiles.TryAdd(childPath, Path.Combine(RootAt(encoded.ContentRootIndex), sub));
                    AddFile(childPath, RootAt(encoded.ContentRootIndex), sub);
                }
                else if (child.Asset is { } asset)
                {
                    var sub = asset.SubPath ?? throw new InvalidDataException($"The static web assets manifest '{source}' gives '{childPath}' an asset without a SubPath.");
                    if (!IsCovered(childPath, asset.ContentRootIndex, sub, covering))
                    {
                        AddFile(childPath, RootAt(asset.ContentRootIndex), sub);
                    }
                }

                Walk(child, childPath, covering);
            }
        }

        /// <summary>
        /// A build's compressed copy: <c>app.css.gz</c> beside an asset <c>app.css</c>. Compressed
        /// copies sit in a root of their own under generated names; the endpoints manifest calls
        /// them encodings of the file beside them, which is how MapStaticAssets uses them.
        /// </summary>
        private static bool IsEncodedCopy(string name, Dictionary<string, RuntimeManifestNode> siblings)
        {
            foreach (var extension in s_encodedExtensions)
            {
                if (name.EndsWith(extension, StringComparison.OrdinalIgnoreCase)
                    && siblings.TryGetValue(name[..^extension.Length], out var original)
                    && original.Asset is not null)
                {
                    return true;
                }
            }

            return false;
        }

        /// <summary>True when an ancestor's <c>**</c> pattern over the same root already serves this file under this URL.</summary>
        private static bool IsCovered(string urlPath, int rootIndex, string subPath, List<(string UrlPath, int Root)> covering)
        {
            foreach (var (prefix, root) in covering)
            {
                if (root == rootIndex && urlPath.Length == prefix.Length + 1 + subPath.Length
                    && urlPath.StartsWith(prefix + "/", StringComparison.Ordinal)
                    && urlPath.EndsWith(subPath, StringComparison.Ordinal))
                {
                    return true;
                }
            }

            return false;
        }

        private string PlainSubPath(string urlPath, string subPath)
        {
            subPath = subPath.Replace('\\', '/').TrimStart('/');
            if (subPath.Split('/').Any(s => s is "" or "." or ".."))
            {
                throw new InvalidDataException($"The static web assets manifest '{source}' maps '{urlPath}' to '{subPath}', which is not a plain path under its content root.");
            }

            return subPath;
        }

        private void AddFile(string urlPath, string root, string subPath)
        {
            subPath = PlainSubPath(urlPath, subPath);

            var urlSlash = urlPath.LastIndexOf('/');
            var urlFolder = urlSlash == 0 ? "/" : urlPath[..urlSlash];
            var subSlash = subPath.LastIndexOf('/');
            var diskFolder = subSlash < 0 ? root : root + "/" + subPath[..subSlash];
            var diskName = subPath[(subSlash + 1)..];

            var key = (urlFolder, diskFolder);
            if (!_files.TryGetValue(key, out var files))
            {
                _files[key] = files = [];
                _fileOrder.Add(key);
            }

            if (!files.Contains("/" + diskName))
            {
                files.Add("/" + diskName);
            }

            if (!string.Equals(diskName, urlPath[(urlSlash + 1)..], StringComparison.Ordinal))
            {
                Renames.Add(new AssetRename(urlPath, (urlSlash == 0 ? "" : urlPath[..urlSlash]) + "/" + diskName));
            }
        }

        private string RootAt(int index)
            => (uint)index < (uint)roots.Count
                ? roots[index]
                : throw new InvalidDataException($"The static web assets manifest '{source}' names content root {index}; it lists {roots.Count}.");
    }
}
