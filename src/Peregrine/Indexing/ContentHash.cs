using System.Buffers;
using System.Security.Cryptography;
using Peregrine.Interop;

namespace Peregrine.Indexing;

/// <summary>
/// The SHA-256 behind content tags, and whose code computes it. On Linux, .NET's SHA-256 is
/// OpenSSL's, and loading OpenSSL to hash a small site costs more resident memory (3.4 MiB of
/// libcrypto and libssl) than the whole site may hold (docs/performance.md, "Content hashes
/// without OpenSSL"). So on Linux a process hashes in managed code (<see cref="Sha256"/>) until
/// it has hashed <see cref="ManagedBudget"/> bytes, or until OpenSSL is in the process anyway
/// (HTTPS, a bucket, a password check), and with OpenSSL from then on: the most the slower code
/// can add to a start-up is the time it takes to hash the budget, under 0.1 s on the machine
/// measured. Both give the same bytes.
/// Elsewhere the platform's SHA-256 is a system library, and is always used.
/// </summary>
internal static class ContentHash
{
    /// <summary>How many bytes a process hashes in managed code before it turns to OpenSSL.</summary>
    public const long ManagedBudget = 16L * 1024 * 1024;

    private const int StreamBufferSize = 64 * 1024;

    // How often the process is asked again whether OpenSSL has come in: dlopen(3) with
    // RTLD_NOLOAD is no cheap look (glibc maps its cache and opens the library file to compare
    // it with what is loaded: 17 system calls for the two names), and asked for every file it
    // made a first index of 100,000 small files several times slower (docs/performance.md,
    // "Content hashes without OpenSSL"). Hashing in managed code a little longer after OpenSSL
    // came in gives the same bytes.
    private const long LookInterval = 100;

    private static long s_managedBytes;
    private static bool s_openSslLoaded;
    private static long s_lookAgainAt;

    /// <summary>The SHA-256 of <paramref name="content"/>.</summary>
    public static void HashData(ReadOnlySpan<byte> content, Span<byte> destination)
    {
        if (TakeManaged(content.Length))
        {
            Sha256.HashData(content, destination);
            Interlocked.Add(ref s_managedBytes, content.Length);
        }
        else
        {
            SHA256.HashData(content, destination);
        }
    }

    /// <summary>The SHA-256 of what is left of <paramref name="content"/>.</summary>
    public static void HashData(Stream content, Span<byte> destination)
    {
        if (!TakeManaged(content.CanSeek ? content.Length - content.Position : 0))
        {
            SHA256.HashData(content, destination);
            return;
        }

        using var hash = new Incremental(managed: true);
        var buffer = ArrayPool<byte>.Shared.Rent(StreamBufferSize);
        try
        {
            int read;
            while ((read = content.Read(buffer)) > 0)
            {
                hash.Append(buffer.AsSpan(0, read));
            }
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }

        hash.Finish(destination);
    }

    /// <summary>A SHA-256 fed piece by piece. Which code computes it is decided when it is made.</summary>
    public sealed class Incremental : IDisposable
    {
        private readonly Sha256? _managed;
        private readonly IncrementalHash? _platform;

        /// <param name="expectedLength">The bytes it will be fed, if known; 0 if not.</param>
        public Incremental(long expectedLength)
            : this(TakeManaged(expectedLength))
        {
        }

        /// <summary>Managed or the platform's, as the caller has already decided.</summary>
        internal Incremental(bool managed)
        {
            if (managed)
            {
                _managed = new Sha256();
            }
            else
            {
                _platform = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            }
        }

        public void Append(ReadOnlySpan<byte> data)
        {
            if (_managed is not null)
            {
                _managed.Append(data);
                Interlocked.Add(ref s_managedBytes, data.Length);
            }
            else
            {
                _platform!.AppendData(data);
            }
        }

        public void Finish(Span<byte> destination)
        {
            if (_managed is not null)
            {
                _managed.Finish(destination);
            }
            else
            {
                _platform!.GetHashAndReset(destination);
            }
        }

        public byte[] Finish()
        {
            var hash = new byte[Sha256.HashSizeInBytes];
            Finish(hash);
            return hash;
        }

        public void Dispose() => _platform?.Dispose();
    }

    /// <summary>
    /// True when the next <paramref name="length"/> bytes are to be hashed in managed code. The
    /// callers count the bytes as they hash them.
    /// </summary>
    private static bool TakeManaged(long length)
        => OperatingSystem.IsLinux() && Volatile.Read(ref s_managedBytes) + length <= ManagedBudget && !OpenSslLoaded();

    private static bool OpenSslLoaded()
    {
        if (!Volatile.Read(ref s_openSslLoaded) && PlatformParts.IsNative && Environment.TickCount64 >= Volatile.Read(ref s_lookAgainAt))
        {
            Volatile.Write(ref s_lookAgainAt, Environment.TickCount64 + LookInterval);
            // Loaded by .NET's OpenSSL shim once anything in the process asked for it; RTLD_NOLOAD
            // only looks, and never loads.
            try
            {
                s_openSslLoaded = Libc.IsLoaded("libcrypto.so.3") || Libc.IsLoaded("libcrypto.so.1.1");
            }
            catch (Exception ex) when (ex is EntryPointNotFoundException or DllNotFoundException)
            {
                // A C library without dlopen(3) (glibc before 2.34 keeps it in libdl): no way to
                // look, so the platform's SHA-256, as if OpenSSL were loaded.
                s_openSslLoaded = true;
            }
        }

        return s_openSslLoaded;
    }
}
