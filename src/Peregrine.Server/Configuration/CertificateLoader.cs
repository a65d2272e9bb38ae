using System.Buffers;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Loads the server certificate named by the TLS settings: a PEM chain and key
/// (<c>--tls-cert</c>, <c>--tls-key</c>) or a PKCS#12 file (<c>--tls-pfx</c>). Every failure is
/// one message naming the file and the setting that named it, so a bad path, a wrong password
/// or a key that belongs to another certificate stops start-up with a sentence, not a trace.
/// The files are read once into <see cref="CertificateFiles"/> and parsed from those bytes, so
/// that <see cref="Hosting.CertificateReloader"/> can tell a changed file from an unchanged one and
/// never parses a file that changed between the look and the parse.
/// </summary>
internal static class CertificateLoader
{
    // A certificate chain and key take a few KB; the bound stops a wrong path (a log file,
    // /dev/zero) from being read whole into memory.
    private const int MaxFileSize = 1024 * 1024;

    // id-kp-serverAuth (RFC 5280 §4.2.1.12).
    private const string ServerAuthentication = "1.3.6.1.5.5.7.3.1";

    /// <summary>Checks that the TLS settings go together; returns false after adding messages if not.</summary>
    public static bool CheckCombination(ServerSettings settings, List<string> errors)
    {
        var count = errors.Count;
        if (settings.TlsCert is not null && settings.TlsKey is null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsCert)}: needs {OptionTable.TlsKey.Flag} with the certificate's private key.");
        }

        if (settings.TlsKey is not null && settings.TlsCert is null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsKey)}: needs {OptionTable.TlsCert.Flag} with the certificate it belongs to.");
        }

        if (settings.TlsPfx is not null && (settings.TlsCert ?? settings.TlsKey) is not null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsPfx)}: give either {OptionTable.TlsPfx.Flag} or {OptionTable.TlsCert.Flag} and {OptionTable.TlsKey.Flag}, not both.");
        }

        if (settings.TlsPassword is not null && settings.TlsPfx is null && settings.TlsKey is null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsPassword)}: only used with {OptionTable.TlsPfx.Flag} or an encrypted {OptionTable.TlsKey.Flag}.");
        }

        return errors.Count == count;
    }

    /// <summary>True when the settings name a certificate (after <see cref="CheckCombination"/> passed).</summary>
    public static bool IsConfigured(ServerSettings settings) => settings.TlsPfx is not null || settings.TlsCert is not null;

    /// <summary>The certificate, or null (with a message added) when it cannot be loaded.</summary>
    public static LoadedCertificate? Load(ServerSettings settings, List<string> errors)
        => Read(settings, errors) is { } files ? Parse(settings, files, errors) : null;

    /// <summary>The bytes of the certificate files as they are now, or null (with messages added).</summary>
    public static CertificateFiles? Read(ServerSettings settings, List<string> errors)
    {
        if (settings.TlsPfx is { } pfx)
        {
            return ReadFile(settings, OptionTable.TlsPfx, pfx, errors) is { } bytes ? new CertificateFiles(bytes, null) : null;
        }

        if (settings.TlsCert is { } cert && settings.TlsKey is { } key)
        {
            var certBytes = ReadFile(settings, OptionTable.TlsCert, cert, errors);
            var keyBytes = ReadFile(settings, OptionTable.TlsKey, key, errors);
            return certBytes is not null && keyBytes is not null ? new CertificateFiles(certBytes, keyBytes) : null;
        }

        return null;
    }

    /// <summary>
    /// Whether the files hold exactly <paramref name="seen"/>'s bytes, read a piece at a time
    /// into a pooled buffer and compared there: the reloader asks every second, and reading them
    /// whole (<see cref="Read"/>) allocated about 35 KB a second on an idle server, for files
    /// that almost never change. False on any difference, and when a file cannot be read (the
    /// caller then reads them whole, and reports why).
    /// </summary>
    public static bool Unchanged(ServerSettings settings, CertificateFiles seen)
    {
        if (settings.TlsPfx is { } pfx)
        {
            return Holds(pfx, seen.Main);
        }

        return settings.TlsCert is { } cert && settings.TlsKey is { } key && seen.Key is { } seenKey
            && Holds(cert, seen.Main) && Holds(key, seenKey);
    }

    private static bool Holds(string path, ReadOnlySpan<byte> expected)
    {
        byte[]? buffer = null;
        try
        {
            using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete);
            if (RandomAccess.GetLength(handle) != expected.Length)
            {
                return false;
            }

            buffer = ArrayPool<byte>.Shared.Rent(16 * 1024);
            long offset = 0;
            int read;
            while ((read = RandomAccess.Read(handle, buffer, offset)) > 0)
            {
                // A file that grew since its length was taken differs too.
                if (offset + read > expected.Length || !buffer.AsSpan(0, read).SequenceEqual(expected.Slice((int)offset, read)))
                {
                    return false;
                }

                offset += read;
            }

            return offset == expected.Length;
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException or NotSupportedException)
        {
            return false;
        }
        finally
        {
            if (buffer is not null)
            {
                ArrayPool<byte>.Shared.Return(buffer);
            }
        }
    }

    /// <summary>The certificate in these bytes, or null (with a message added).</summary>
    public static LoadedCertificate? Parse(ServerSettings settings, CertificateFiles files, List<string> errors)
    {
        X509Certificate2? certificate = null;
        X509Certificate2Collection? all = null;
        try
        {
            if (settings.TlsPfx is { } pfx)
            {
                try
                {
                    all = X509CertificateLoader.LoadPkcs12Collection(files.Main, settings.TlsPassword);
                    certificate = X509CertificateLoader.LoadPkcs12(files.Main, settings.TlsPassword);
                }
                catch (CryptographicException ex)
                {
                    var hint = settings.TlsPassword is null ? $" (if it has a password, give {OptionTable.TlsPassword.Flag})" : $" (is {OptionTable.TlsPassword.Flag} right?)";
                    errors.Add($"{settings.Describe(OptionTable.TlsPfx)}: cannot load '{pfx}': {ex.Message.TrimEnd('.')}{hint}.");
                    return null;
                }
            }
            else if (settings.TlsCert is { } cert && settings.TlsKey is { } key)
            {
                var certText = Encoding.UTF8.GetString(files.Main);
                var keyText = Encoding.UTF8.GetString(files.Key!);
                if (!PemParts(settings, certText, keyText, errors))
                {
                    return null;
                }

                try
                {
                    // A block cut short (a file caught half-written) is not found at all.
                    all = [];
                    all.ImportFromPem(certText);
                    if (all.Count == 0)
                    {
                        errors.Add($"{settings.Describe(OptionTable.TlsCert)}: '{cert}' holds no complete PEM certificate (it ends before -----END CERTIFICATE-----, or is not PEM).");
                        return null;
                    }

                    if (!HasCompleteKey(keyText))
                    {
                        errors.Add($"{settings.Describe(OptionTable.TlsKey)}: '{key}' holds no complete PEM private key (it ends before its -----END line, or is not PEM).");
                        return null;
                    }

                    certificate = settings.TlsPassword is { } password
                        ? X509Certificate2.CreateFromEncryptedPem(certText, keyText, password)
                        : X509Certificate2.CreateFromPem(certText, keyText);
                }
                catch (Exception ex) when (ex is CryptographicException or ArgumentException)
                {
                    // Both files hold the right kind of PEM block, so the key is another
                    // certificate's, the password does not open it, or a block is cut short.
                    var why = settings.TlsPassword is null ? "it is not that certificate's private key" : $"it is not that certificate's private key, or {OptionTable.TlsPassword.Flag} is wrong";
                    errors.Add($"{settings.Describe(OptionTable.TlsKey)}: cannot use '{key}' with the certificate '{cert}': {why}.");
                    return null;
                }
            }
            else
            {
                return null;
            }

            if (!certificate.HasPrivateKey)
            {
                errors.Add($"{settings.Describe(settings.TlsPfx is null ? OptionTable.TlsCert : OptionTable.TlsPfx)}: '{settings.TlsPfx ?? settings.TlsCert}' holds no private key.");
                return null;
            }

            // Kestrel refuses such a certificate too (HttpsConnectionMiddleware), and clients would.
            if (certificate.Extensions.OfType<X509EnhancedKeyUsageExtension>().FirstOrDefault() is { } usage
                && !usage.EnhancedKeyUsages.Cast<Oid>().Any(static oid => oid.Value == ServerAuthentication))
            {
                errors.Add($"{settings.Describe(settings.TlsPfx is null ? OptionTable.TlsCert : OptionTable.TlsPfx)}: '{settings.TlsPfx ?? settings.TlsCert}' is not for servers (its Extended Key Usage lacks serverAuth).");
                return null;
            }

            // The rest of the file is the chain the server sends after its own certificate:
            // intermediates a client may not have (RFC 8446 §4.4.2).
            var chain = new X509Certificate2Collection();
            foreach (var other in all)
            {
                if (other.RawDataMemory.Span.SequenceEqual(certificate.RawDataMemory.Span))
                {
                    other.Dispose();
                }
                else
                {
                    chain.Add(other);
                }
            }

            all = null;
            var loaded = new LoadedCertificate(certificate, chain, files);
            certificate = null;
            return loaded;
        }
        finally
        {
            certificate?.Dispose();
            if (all is not null)
            {
                foreach (var other in all)
                {
                    other.Dispose();
                }
            }
        }
    }

    /// <summary>Checks each PEM file for its kind of block, so that a message can say which file is wrong.</summary>
    private static bool PemParts(ServerSettings settings, string certText, string keyText, List<string> errors)
    {
        var ok = true;
        if (!certText.Contains("-----BEGIN CERTIFICATE-----", StringComparison.Ordinal))
        {
            errors.Add($"{settings.Describe(OptionTable.TlsCert)}: '{settings.TlsCert}' holds no PEM certificate (-----BEGIN CERTIFICATE-----).");
            ok = false;
        }

        if (!keyText.Contains("PRIVATE KEY-----", StringComparison.Ordinal))
        {
            errors.Add($"{settings.Describe(OptionTable.TlsKey)}: '{settings.TlsKey}' holds no PEM private key (-----BEGIN PRIVATE KEY-----).");
            ok = false;
        }
        else if (keyText.Contains("-----BEGIN ENCRYPTED PRIVATE KEY-----", StringComparison.Ordinal) && settings.TlsPassword is null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsKey)}: '{settings.TlsKey}' is encrypted; give its password with {OptionTable.TlsPassword.Flag} or {OptionTable.TlsPassword.EnvironmentVariable}.");
            ok = false;
        }

        return ok;
    }

    private static bool HasCompleteKey(ReadOnlySpan<char> text)
    {
        while (PemEncoding.TryFind(text, out var fields))
        {
            if (text[fields.Label].EndsWith("PRIVATE KEY", StringComparison.Ordinal))
            {
                return true;
            }

            text = text[fields.Location.End..];
        }

        return false;
    }

    private static byte[]? ReadFile(ServerSettings settings, OptionSpec option, string path, List<string> errors)
    {
        if (!File.Exists(path))
        {
            errors.Add($"{settings.Describe(option)}: cannot read '{path}': no such file.");
            return null;
        }

        try
        {
            using var stream = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.ReadWrite | FileShare.Delete, bufferSize: 0);
            using var content = new MemoryStream();
            var buffer = new byte[16 * 1024];
            int read;
            while ((read = stream.Read(buffer)) > 0)
            {
                content.Write(buffer, 0, read);
                if (content.Length > MaxFileSize)
                {
                    errors.Add($"{settings.Describe(option)}: '{path}' is larger than 1 MiB, too large for a certificate or key.");
                    return null;
                }
            }

            return content.ToArray();
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{settings.Describe(option)}: cannot read '{path}': {ex.Message}");
            return null;
        }
    }
}
