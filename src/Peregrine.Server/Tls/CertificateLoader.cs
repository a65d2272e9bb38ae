using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Peregrine.Server.Configuration;

namespace Peregrine.Server.Tls;

/// <summary>
/// Loads the server certificate named by the TLS settings: a PEM chain and key
/// (<c>--tls-cert</c>, <c>--tls-key</c>) or a PKCS#12 file (<c>--tls-pfx</c>). Every failure is
/// one message naming the file and the setting that named it, so a bad path, a wrong password
/// or a key that belongs to another certificate stops start-up with a sentence, not a trace.
/// </summary>
internal static class CertificateLoader
{
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

    /// <summary>The certificate, or null (with a message added) when it cannot be loaded.</summary>
    public static X509Certificate2? Load(ServerSettings settings, List<string> errors)
    {
        X509Certificate2? certificate = null;
        try
        {
            if (settings.TlsPfx is { } pfx)
            {
                if (!Readable(settings, OptionTable.TlsPfx, pfx, errors))
                {
                    return null;
                }

                try
                {
                    certificate = X509CertificateLoader.LoadPkcs12FromFile(pfx, settings.TlsPassword);
                }
                catch (CryptographicException ex)
                {
                    var hint = settings.TlsPassword is null ? $" (if it has a password, give {OptionTable.TlsPassword.Flag})" : $" (is {OptionTable.TlsPassword.Flag} right?)";
                    errors.Add($"{settings.Describe(OptionTable.TlsPfx)}: cannot load '{pfx}': {ex.Message.TrimEnd('.')}{hint}.");
                    return null;
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    errors.Add($"{settings.Describe(OptionTable.TlsPfx)}: cannot read '{pfx}': {ex.Message}");
                    return null;
                }
            }
            else if (settings.TlsCert is { } cert && settings.TlsKey is { } key)
            {
                if (!Readable(settings, OptionTable.TlsCert, cert, errors) | !Readable(settings, OptionTable.TlsKey, key, errors))
                {
                    return null;
                }

                if (!PemParts(settings, cert, key, errors))
                {
                    return null;
                }

                try
                {
                    certificate = settings.TlsPassword is { } password
                        ? X509Certificate2.CreateFromEncryptedPemFile(cert, password, key)
                        : X509Certificate2.CreateFromPemFile(cert, key);
                }
                catch (Exception ex) when (ex is CryptographicException or ArgumentException)
                {
                    // Both files hold the right kind of PEM block, so the key is another
                    // certificate's, or the password does not open it.
                    var why = settings.TlsPassword is null ? "it is not that certificate's private key" : $"it is not that certificate's private key, or {OptionTable.TlsPassword.Flag} is wrong";
                    errors.Add($"{settings.Describe(OptionTable.TlsKey)}: cannot use '{key}' with the certificate '{cert}': {why}.");
                    return null;
                }
                catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
                {
                    errors.Add($"{settings.Describe(OptionTable.TlsCert)}: cannot read '{cert}' or '{key}': {ex.Message}");
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

            var loaded = certificate;
            certificate = null;
            return loaded;
        }
        finally
        {
            certificate?.Dispose();
        }
    }

    /// <summary>Checks each PEM file for its kind of block, so that a message can say which file is wrong.</summary>
    private static bool PemParts(ServerSettings settings, string cert, string key, List<string> errors)
    {
        string certText, keyText;
        try
        {
            certText = File.ReadAllText(cert);
            keyText = File.ReadAllText(key);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsCert)}: cannot read '{cert}' or '{key}': {ex.Message}");
            return false;
        }

        var ok = true;
        if (!certText.Contains("-----BEGIN CERTIFICATE-----", StringComparison.Ordinal))
        {
            errors.Add($"{settings.Describe(OptionTable.TlsCert)}: '{cert}' holds no PEM certificate (-----BEGIN CERTIFICATE-----).");
            ok = false;
        }

        if (!keyText.Contains("PRIVATE KEY-----", StringComparison.Ordinal))
        {
            errors.Add($"{settings.Describe(OptionTable.TlsKey)}: '{key}' holds no PEM private key (-----BEGIN PRIVATE KEY-----).");
            ok = false;
        }
        else if (keyText.Contains("-----BEGIN ENCRYPTED PRIVATE KEY-----", StringComparison.Ordinal) && settings.TlsPassword is null)
        {
            errors.Add($"{settings.Describe(OptionTable.TlsKey)}: '{key}' is encrypted; give its password with {OptionTable.TlsPassword.Flag} or {OptionTable.TlsPassword.EnvironmentVariable}.");
            ok = false;
        }

        return ok;
    }

    private static bool Readable(ServerSettings settings, OptionSpec option, string path, List<string> errors)
    {
        if (File.Exists(path))
        {
            return true;
        }

        errors.Add($"{settings.Describe(option)}: cannot read '{path}': no such file.");
        return false;
    }
}
