using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>A self-signed certificate for localhost and 127.0.0.1, written as PEM and PKCS#12 files.</summary>
internal sealed class TestCertificate
{
    public const string PfxPassword = "correct horse";

    public const string KeyPassword = "battery staple";

    public TestCertificate(string folder, string name = "server")
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=localhost", key, HashAlgorithmName.SHA256);
        var names = new SubjectAlternativeNameBuilder();
        names.AddDnsName("localhost");
        names.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(names.Build());
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        using var certificate = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));

        CertPath = Path.Combine(folder, name + ".crt.pem");
        KeyPath = Path.Combine(folder, name + ".key.pem");
        EncryptedKeyPath = Path.Combine(folder, name + ".key.enc.pem");
        PfxPath = Path.Combine(folder, name + ".pfx");
        File.WriteAllText(CertPath, certificate.ExportCertificatePem());
        File.WriteAllText(KeyPath, key.ExportPkcs8PrivateKeyPem());
        File.WriteAllText(EncryptedKeyPath, key.ExportEncryptedPkcs8PrivateKeyPem(
            KeyPassword, new PbeParameters(PbeEncryptionAlgorithm.Aes256Cbc, HashAlgorithmName.SHA256, 10_000)));
        File.WriteAllBytes(PfxPath, certificate.Export(X509ContentType.Pkcs12, PfxPassword));
        Thumbprint = certificate.Thumbprint;
    }

    public string CertPath { get; }

    public string KeyPath { get; }

    public string EncryptedKeyPath { get; }

    public string PfxPath { get; }

    public string Thumbprint { get; }
}
