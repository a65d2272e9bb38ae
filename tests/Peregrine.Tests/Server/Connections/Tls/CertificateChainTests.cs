using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>What the certificate file holds besides the server's certificate, and what it must be for.</summary>
public sealed class CertificateChainTests : IDisposable
{
    private readonly TempTree _tree = new();

    public CertificateChainTests() => _tree.Write("site/index.html", "chained");

    private string Site => Path.Combine(_tree.Root, "site");

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task IntermediateAfterTheCertificate_IsSentInTheHandshake()
    {
        using var rootKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var intermediateKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        using var leafKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        // One validity window for both authorities: read from the clock once per certificate,
        // the intermediate's end fell a second after the root's whenever the clock ticked over a
        // second between the two (times are kept to the second), and an issued certificate may
        // not outlive its issuer.
        var (from, until) = (DateTimeOffset.UtcNow.AddMinutes(-10), DateTimeOffset.UtcNow.AddDays(2));
        using var root = Authority("CN=Test Root", rootKey, null, null, from, until);
        using var intermediate = Authority("CN=Test Intermediate", intermediateKey, root, rootKey, from, until);
        var leafRequest = new CertificateRequest("CN=localhost", leafKey, HashAlgorithmName.SHA256);
        leafRequest.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.1")], critical: false));
        using var leaf = leafRequest.Create(intermediate, DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1), [1, 2, 3, 4]);
        var cert = _tree.Write("chain.pem", leaf.ExportCertificatePem() + "\n" + intermediate.ExportCertificatePem() + "\n");
        var key = _tree.Write("leaf.key.pem", leafKey.ExportPkcs8PrivateKeyPem());
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", cert, "--tls-key", key);

        var sent = new List<string>();
        using var socket = new TcpClient();
        await socket.ConnectAsync(IPAddress.Loopback, server.Address.Port);
        await using var tls = new SslStream(socket.GetStream());
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            RemoteCertificateValidationCallback = (_, _, chain, _) =>
            {
                // What the server sent beside its own certificate.
                sent.AddRange(chain!.ChainPolicy.ExtraStore.Select(c => c.Thumbprint));
                return true;
            },
        });

        Assert.Equal(leaf.Thumbprint, ((X509Certificate2)tls.RemoteCertificate!).Thumbprint);
        Assert.Contains(intermediate.Thumbprint, sent);
        Assert.DoesNotContain(root.Thumbprint, sent);
    }

    [Fact]
    public void CertificateNotForServers_IsAnErrorNamingIt()
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest("CN=client", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension([new Oid("1.3.6.1.5.5.7.3.2")], critical: false));
        using var clientOnly = request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
        var cert = _tree.Write("client.pem", clientOnly.ExportCertificatePem());
        var keyFile = _tree.Write("client.key.pem", key.ExportPkcs8PrivateKeyPem());

        var loaded = SettingsLoader.Load([Site, "--tls-cert", cert, "--tls-key", keyFile], new Dictionary<string, string>());

        Assert.Equal($"--tls-cert (command line): '{cert}' is not for servers (its Extended Key Usage lacks serverAuth).", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void FileThatNeverEnds_IsRefusedAfter1MiB()
    {
        var loaded = SettingsLoader.Load([Site, "--tls-cert", "/dev/zero", "--tls-key", "/dev/zero"], new Dictionary<string, string>());

        Assert.Contains("--tls-cert (command line): '/dev/zero' is larger than 1 MiB, too large for a certificate or key.", loaded.Errors);
    }

    private static X509Certificate2 Authority(string name, ECDsa key, X509Certificate2? issuer, ECDsa? issuerKey, DateTimeOffset from, DateTimeOffset until)
    {
        var request = new CertificateRequest(name, key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign, true));
        if (issuer is null)
        {
            return request.CreateSelfSigned(from, until);
        }

        using var issued = request.Create(issuer, from, until, Encoding.ASCII.GetBytes("intermed"));
        return issued.CopyWithPrivateKey(key);
    }
}
