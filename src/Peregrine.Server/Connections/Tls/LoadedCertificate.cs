using System.Security.Cryptography.X509Certificates;

namespace Peregrine.Server.Connections.Tls;

/// <summary>The bytes of the certificate files at one moment: the PEM chain and key, or the PKCS#12 file.</summary>
internal sealed record CertificateFiles(byte[] Main, byte[]? Key)
{
    public bool SameAs(CertificateFiles other)
        => Main.AsSpan().SequenceEqual(other.Main) && (Key ?? []).AsSpan().SequenceEqual(other.Key ?? []);
}

/// <summary>A server certificate with its private key, the chain sent after it, and the bytes it came from.</summary>
internal sealed class LoadedCertificate(X509Certificate2 certificate, X509Certificate2Collection chain, CertificateFiles files) : IDisposable
{
    public X509Certificate2 Certificate { get; } = certificate;

    public X509Certificate2Collection Chain { get; } = chain;

    public CertificateFiles Files { get; } = files;

    public void Dispose()
    {
        Certificate.Dispose();
        foreach (var other in Chain)
        {
            other.Dispose();
        }
    }
}
