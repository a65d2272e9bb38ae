using System.Net;
using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Connections.Tls;

public sealed class TlsTests : IDisposable
{
    private readonly TempTree _tree = new();
    private readonly TestCertificate _certificate;

    public TlsTests()
    {
        _tree.Write("site/index.html", "<!doctype html><title>secure</title>");
        _tree.Write("site/app.js", new string('x', 100_000));
        _certificate = new TestCertificate(_tree.Root);
    }

    private string Site => Path.Combine(_tree.Root, "site");

    public void Dispose() => _tree.Dispose();

    private static LoadResult Load(params string[] args) => SettingsLoader.Load(args, new Dictionary<string, string>());

    [Fact]
    public async Task PemCertificate_ServesHttpsWithHttp2AndHttp11ByAlpn()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);
        using var client = server.CreateClient();

        using var h2 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/app.js")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });
        using var h1 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/app.js")
        {
            Version = HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.Equal("https", server.Address.Scheme);
        Assert.Equal(HttpStatusCode.OK, h2.StatusCode);
        Assert.Equal(HttpVersion.Version20, h2.Version);
        Assert.Equal(HttpVersion.Version11, h1.Version);
        Assert.Equal(100_000, (await h2.Content.ReadAsByteArrayAsync()).Length);
        Assert.Equal(await h1.Content.ReadAsByteArrayAsync(), await h2.Content.ReadAsByteArrayAsync());
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task TlsSizing_OnOrOff_ServesTheSameBytesOverHttp11AndHttp2(bool off)
    {
        string[] args = [Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath, .. off ? new[] { "--no-tls-sizing" } : []];
        await using var server = await RunningServer.StartAsync(args);
        using var client = server.CreateClient();

        var bodies = new List<byte[]>();
        foreach (var version in new[] { HttpVersion.Version11, HttpVersion.Version20, HttpVersion.Version11 })
        {
            using var response = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/app.js") { Version = version, VersionPolicy = HttpVersionPolicy.RequestVersionExact });
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal(version, response.Version);
            bodies.Add(await response.Content.ReadAsByteArrayAsync());
        }

        Assert.All(bodies, body => Assert.Equal(bodies[0], body));
        Assert.Equal(100_000, bodies[0].Length);
    }

    [Fact]
    public async Task PemCertificate_PresentsThatCertificate()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);
        string? presented = null;
        using var client = new HttpClient(new SocketsHttpHandler
        {
            SslOptions =
            {
                RemoteCertificateValidationCallback = (_, certificate, _, _) =>
                {
                    presented = (certificate as System.Security.Cryptography.X509Certificates.X509Certificate2)?.Thumbprint;
                    return true;
                },
            },
        });

        using var response = await client.GetAsync(server.Address);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(_certificate.Thumbprint, presented);
    }

    [Fact]
    public async Task EncryptedPemKey_IsOpenedWithThePassword()
    {
        await using var server = await RunningServer.StartAsync(
            Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.EncryptedKeyPath, "--tls-password", TestCertificate.KeyPassword);
        using var client = server.CreateClient();

        using var response = await client.GetAsync("/");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
    }

    [Fact]
    public async Task PfxWithPassword_ServesHttp2()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-pfx", _certificate.PfxPath, "--tls-password", TestCertificate.PfxPassword);
        using var client = server.CreateClient();

        using var response = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.Equal(HttpVersion.Version20, response.Version);
        Assert.Contains("secure", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task Https_DoesNotAcceptCleartext()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.KeyPath);
        using var client = new HttpClient();

        // No file is served over cleartext: the answer is nginx's 400 saying why
        // (PlainHttpOnTlsPortTests), where it used to be a closed connection.
        using var response = await client.GetAsync(new UriBuilder(server.Address) { Scheme = "http", Path = "/index.html" }.Uri);
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
        Assert.DoesNotContain("secure", await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public void MissingCertificateFile_IsAnErrorNamingTheFile()
    {
        var missing = Path.Combine(_tree.Root, "nope.pem");

        var loaded = Load(Site, "--tls-cert", missing, "--tls-key", _certificate.KeyPath);

        Assert.Equal($"--tls-cert (command line): cannot read '{missing}': no such file.", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void KeyOfAnotherCertificate_IsAnErrorNamingBothFiles()
    {
        var other = new TestCertificate(_tree.Root, "other");

        var loaded = Load(Site, "--tls-cert", _certificate.CertPath, "--tls-key", other.KeyPath);

        var error = Assert.Single(loaded.Errors);
        Assert.StartsWith($"--tls-key (command line): cannot use '{other.KeyPath}' with the certificate '{_certificate.CertPath}'", error);
    }

    [Fact]
    public void FilesSwapped_IsAnErrorNamingTheFiles()
    {
        var loaded = Load(Site, "--tls-cert", _certificate.KeyPath, "--tls-key", _certificate.CertPath);

        Assert.Equal(
            [
                $"--tls-cert (command line): '{_certificate.KeyPath}' holds no PEM certificate (-----BEGIN CERTIFICATE-----).",
                $"--tls-key (command line): '{_certificate.CertPath}' holds no PEM private key (-----BEGIN PRIVATE KEY-----).",
            ],
            loaded.Errors);
    }

    [Theory]
    [InlineData("wrong password")]
    [InlineData(null)]
    public void PfxWithWrongOrNoPassword_IsAnErrorNamingTheFile(string? password)
    {
        string[] args = password is null
            ? [Site, "--tls-pfx", _certificate.PfxPath]
            : [Site, "--tls-pfx", _certificate.PfxPath, "--tls-password", password];

        var loaded = Load(args);

        var error = Assert.Single(loaded.Errors);
        Assert.StartsWith($"--tls-pfx (command line): cannot load '{_certificate.PfxPath}'", error);
        Assert.Contains("--tls-password", error);
    }

    [Fact]
    public void EncryptedKeyWithoutPassword_IsAnError()
    {
        var loaded = Load(Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.EncryptedKeyPath);

        Assert.Equal(
            $"--tls-key (command line): '{_certificate.EncryptedKeyPath}' is encrypted; give its password with --tls-password or PEREGRINE_TLS_PASSWORD.",
            Assert.Single(loaded.Errors));
    }

    [Fact]
    public void EncryptedKeyWithWrongPassword_IsAnErrorNamingTheKey()
    {
        var loaded = Load(Site, "--tls-cert", _certificate.CertPath, "--tls-key", _certificate.EncryptedKeyPath, "--tls-password", "wrong");

        Assert.StartsWith($"--tls-key (command line): cannot use '{_certificate.EncryptedKeyPath}'", Assert.Single(loaded.Errors));
    }

    [Theory]
    [InlineData(new[] { "--tls-cert", "CERT" }, "--tls-cert (command line): needs --tls-key")]
    [InlineData(new[] { "--tls-key", "KEY" }, "--tls-key (command line): needs --tls-cert")]
    [InlineData(new[] { "--tls-pfx", "PFX", "--tls-cert", "CERT", "--tls-key", "KEY" }, "--tls-pfx (command line): give either")]
    [InlineData(new[] { "--tls-password", "x" }, "--tls-password (command line): only used with")]
    public void TlsOptionsThatDoNotGoTogether_AreErrors(string[] args, string expected)
    {
        var resolved = args.Select(a => a switch
        {
            "CERT" => _certificate.CertPath,
            "KEY" => _certificate.KeyPath,
            "PFX" => _certificate.PfxPath,
            _ => a,
        }).Prepend(Site).ToArray();

        var loaded = Load(resolved);

        Assert.StartsWith(expected, Assert.Single(loaded.Errors));
    }

    [Fact]
    public void TlsFromEnvironment_IsNamedAsSuch()
    {
        var missing = Path.Combine(_tree.Root, "missing.pfx");

        var loaded = SettingsLoader.Load([Site], new Dictionary<string, string> { ["PEREGRINE_TLS_PFX"] = missing });

        Assert.Equal($"PEREGRINE_TLS_PFX (environment): cannot read '{missing}': no such file.", Assert.Single(loaded.Errors));
    }
}
