using System.Globalization;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Win32.SafeHandles;
using Peregrine.Indexing;
using static Peregrine.Interop.Libc;

namespace Peregrine.Compression;

/// <summary>
/// The kept versions (<see cref="KeptVersions"/>) written to the compression cache folder, so
/// that a browser holding a version from before a restart still gets a delta after the next
/// deploy (docs/serving.md, "Compression dictionaries").
/// </summary>
/// <remarks>
/// <para>
/// Unlike the cache's variants, which are keyed by content and shared on purpose, which versions
/// an instance keeps is its own history, so it lives in a folder of the instance's own:
/// <c>dictionaries/{key}.{slot}</c>, where the key is a hash of what the instance serves (its
/// roots and mount paths) and the slot is the first of <see cref="Slots"/> whose folder no other
/// live process holds (an exclusive <c>flock(2)</c> on the folder, held for the store's life, as
/// <see cref="Sources.InstanceFolder"/> does). Two servers of one site on one host (HTTP and
/// HTTPS, or a new release started before the old one stops) each write their own slot and never
/// one another's. At start the store reads the slot written last of its key, its own or
/// another's: files are only ever replaced by rename, so a reader sees a whole file or none.
/// </para>
/// <para>
/// The folder holds <c>kept.v1</c>, one line per version, oldest first (its SHA-256 in hex, a
/// space, its <c>match</c> pattern), and each version's bytes as <c>{sha256}.bin</c>. What is
/// read back is checked line by line: a line that does not parse, a pattern that is not one
/// <see cref="DictionaryMatch"/> makes, bytes missing, unreadable, larger than
/// <see cref="DictionaryOptions.MaxBytes"/> or not of their SHA-256 are left out with a log line
/// and never served from. Security limit: as for the cache, the folder must be writable only
/// by the server; the hash check keeps a damaged file from being used as a dictionary.
/// </para>
/// </remarks>
internal sealed class KeptVersionStore : IDisposable
{
    /// <summary>How many servers of one site on one host may each keep a slot.</summary>
    public const int Slots = 8;

    private const string IndexName = "kept.v1";
    private const string ContentSuffix = ".bin";
    private const string WindowsLockName = ".lock";

    private readonly string _parent;
    private readonly string _key;
    private readonly SafeFileHandle _lock;
    private readonly ILogger _logger;

    private KeptVersionStore(string parent, string key, string folder, SafeFileHandle lockHandle, ILogger logger)
    {
        _parent = parent;
        _key = key;
        Folder = folder;
        _lock = lockHandle;
        _logger = logger;
    }

    /// <summary>The folder this store writes.</summary>
    public string Folder { get; }

    /// <summary>
    /// The key of an instance that serves <paramref name="options"/>: its root and mounts (as
    /// full paths) and request path, so that two instances that serve different content never
    /// read each other's versions.
    /// </summary>
    public static string KeyFor(PeregrineOptions options)
    {
        var text = new StringBuilder();
        text.Append(FullPath(options.Root)).Append('\n').Append(options.RequestPath.Value).Append('\n');
        foreach (var mount in options.Mounts)
        {
            text.Append(mount.UrlPath).Append('\t').Append(FullPath(mount.Root)).Append('\n');
        }

        return Convert.ToHexStringLower(SHA256.HashData(Encoding.UTF8.GetBytes(text.ToString())))[..32];
    }

    /// <summary>
    /// The store under <paramref name="cacheDirectory"/> for <paramref name="key"/>, its slot
    /// made and locked; <see langword="null"/>, with a log line, when no slot can be had.
    /// </summary>
    public static KeptVersionStore? Open(string cacheDirectory, string key, ILogger logger)
    {
        try
        {
            var parent = Path.Combine(Path.GetFullPath(cacheDirectory), "dictionaries");
            Directory.CreateDirectory(parent);
            for (var slot = 0; slot < Slots; slot++)
            {
                var folder = Path.Combine(parent, key + "." + slot.ToString(CultureInfo.InvariantCulture));
                Directory.CreateDirectory(folder);
                if (TryLock(folder) is { } handle)
                {
                    return new KeptVersionStore(parent, key, folder, handle, logger);
                }
            }

            CompressionLog.KeptVersionsNotSaved(logger, parent, $"all {Slots} slots of this site are held by other processes");
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or ArgumentException or NotSupportedException)
        {
            CompressionLog.KeptVersionsNotSaved(logger, cacheDirectory, ex.Message);
        }

        return null;
    }

    /// <summary>
    /// The versions written last by any server of this site, oldest first, each checked; what
    /// cannot be used is left out with a log line.
    /// </summary>
    public List<(string Match, byte[] Sha256, byte[] Content)> Load(long maxBytes)
    {
        var loaded = new List<(string, byte[], byte[])>();
        if (NewestIndex() is not { } index)
        {
            return loaded;
        }

        string[] lines;
        try
        {
            lines = File.ReadAllLines(index);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            CompressionLog.KeptVersionIgnored(_logger, index, ex.Message);
            return loaded;
        }

        var folder = Path.GetDirectoryName(index)!;
        foreach (var line in lines)
        {
            if (Read(folder, line, maxBytes, out var reason) is { } version)
            {
                loaded.Add(version);
            }
            else
            {
                CompressionLog.KeptVersionIgnored(_logger, index, reason!);
            }
        }

        return loaded;
    }

    /// <summary>
    /// Writes <paramref name="versions"/> (oldest first) as this slot's whole content: the bytes
    /// not yet written, then the list by rename, then the files no longer listed removed.
    /// </summary>
    public void Save(IEnumerable<KeptVersions.Version> versions)
    {
        try
        {
            var listed = new HashSet<string>(StringComparer.Ordinal);
            var index = new StringBuilder();
            foreach (var version in versions)
            {
                var name = Convert.ToHexStringLower(version.Sha256);
                listed.Add(name + ContentSuffix);
                var path = Path.Combine(Folder, name + ContentSuffix);
                if (!File.Exists(path))
                {
                    CompressionCache.WriteAtomically(path, version.Content);
                }

                index.Append(name).Append(' ').Append(version.Match).Append('\n');
            }

            CompressionCache.WriteAtomically(Path.Combine(Folder, IndexName), Encoding.UTF8.GetBytes(index.ToString()));
            foreach (var file in Directory.EnumerateFiles(Folder))
            {
                var name = Path.GetFileName(file);
                if (name != IndexName && name != WindowsLockName && !listed.Contains(name))
                {
                    CompressionCache.TryDelete(file);
                }
            }
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            CompressionLog.KeptVersionsNotSaved(_logger, Folder, ex.Message);
        }
    }

    public void Dispose() => _lock.Dispose();

    private static (string, byte[], byte[])? Read(string folder, string line, long maxBytes, out string? reason)
    {
        var space = line.IndexOf(' ', StringComparison.Ordinal);
        var hex = space == 64 ? line[..64] : "";
        var match = space == 64 ? line[65..] : "";
        if (hex.Length != 64 || !hex.All(char.IsAsciiHexDigitLower) || !DictionaryMatch.IsPattern(match))
        {
            reason = $"the line '{Shorten(line)}' is not a SHA-256 and a pattern";
            return null;
        }

        var path = Path.Combine(folder, hex + ContentSuffix);
        try
        {
            var info = new FileInfo(path);
            if (!info.Exists || info.Length > maxBytes)
            {
                reason = info.Exists ? $"{hex}{ContentSuffix} is larger than MaxBytes" : $"{hex}{ContentSuffix} is missing";
                return null;
            }

            var content = File.ReadAllBytes(path);
            var sha256 = SHA256.HashData(content);
            if (!Convert.ToHexStringLower(sha256).Equals(hex, StringComparison.Ordinal))
            {
                reason = $"{hex}{ContentSuffix} does not hash to its name";
                return null;
            }

            reason = null;
            return (match, sha256, content);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            reason = ex.Message;
            return null;
        }
    }

    /// <summary>The <c>kept.v1</c> of this key's slots written last, this store's own included.</summary>
    private string? NewestIndex()
    {
        string? newest = null;
        var newestTime = DateTime.MinValue;
        for (var slot = 0; slot < Slots; slot++)
        {
            var index = Path.Combine(_parent, _key + "." + slot.ToString(CultureInfo.InvariantCulture), IndexName);
            try
            {
                var info = new FileInfo(index);
                if (info.Exists && info.LastWriteTimeUtc > newestTime)
                {
                    (newest, newestTime) = (index, info.LastWriteTimeUtc);
                }
            }
            catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
            {
                // Unreadable: that slot is not read.
            }
        }

        return newest;
    }

    /// <summary>The folder opened and locked exclusively; <see langword="null"/> while another process holds it.</summary>
    private static SafeFileHandle? TryLock(string folder)
    {
        if (OperatingSystem.IsWindows())
        {
            try
            {
                // A folder cannot be locked there; a lock file held open without sharing is.
                return File.OpenHandle(Path.Combine(folder, WindowsLockName), FileMode.OpenOrCreate, FileAccess.ReadWrite, FileShare.None);
            }
            catch (IOException)
            {
                return null;
            }
        }

        var fd = open(folder, OpenReadOnly | OpenDirectory | OpenCloseOnExec);
        if (fd < 0)
        {
            throw new IOException($"Cannot open '{folder}' (errno {Marshal.GetLastPInvokeError()}).");
        }

        var handle = new SafeFileHandle(fd, ownsHandle: true);
        if (flock(fd, LockExclusive | LockNonBlocking) == 0)
        {
            return handle;
        }

        var error = Marshal.GetLastPInvokeError();
        handle.Dispose();
        if (error == WouldBlock)
        {
            return null;
        }

        // A file system that takes no locks (some NFS and FUSE mounts): no slot can be owned.
        throw new IOException($"Cannot lock '{folder}' (errno {error}).");
    }

    /// <summary>The full path of a folder option; an empty one (an instance of mounts only) stays empty.</summary>
    private static string FullPath(string folder) => folder.Length == 0 ? "" : Path.GetFullPath(folder);

    private static string Shorten(string text) => text.Length <= 80 ? text : text[..80] + "…";
}
