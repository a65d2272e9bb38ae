using System.Diagnostics;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Cryptography.X509Certificates;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Server.Hosting;

namespace Peregrine.Tests.Server.Connections.Tls;

/// <summary>
/// A renewed certificate is used without a restart: replaced on disk, it is what new handshakes
/// present within 5 s, through real Kestrel; files caught half-written keep the old one.
/// </summary>
public sealed class CertificateReloadTests : IDisposable
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(5);

    private readonly TempTree _tree = new();
    private readonly TestCertificate _first;
    private readonly TestCertificate _renewed;

    public CertificateReloadTests()
    {
        _tree.Write("site/index.html", "<!doctype html><title>renewed</title>");
        _first = new TestCertificate(_tree.Root);
        Directory.CreateDirectory(Path.Combine(_tree.Root, "renewed"));
        _renewed = new TestCertificate(Path.Combine(_tree.Root, "renewed"));
        Assert.NotEqual(_first.Thumbprint, _renewed.Thumbprint);
    }

    private string Site => Path.Combine(_tree.Root, "site");

    public void Dispose() => _tree.Dispose();

    [Fact]
    public async Task PemFilesOverwritten_NewHandshakesPresentTheNewCertificateWithin5Seconds()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath);
        Assert.Equal(_first.Thumbprint, await PresentedAsync(server.Address));
        using var open = await ConnectAsync(server.Address);

        // Written in place, as cp does: the server may see a file half-written on the way.
        File.Copy(_renewed.KeyPath, _first.KeyPath, overwrite: true);
        File.Copy(_renewed.CertPath, _first.CertPath, overwrite: true);
        var elapsed = await UntilPresentedAsync(server.Address, _renewed.Thumbprint);

        Assert.True(elapsed < s_bound, $"the new certificate took {elapsed.TotalSeconds:0.0} s");
        using var client = server.CreateClient();
        using var response = await client.GetAsync("/");
        Assert.Contains("renewed", await response.Content.ReadAsStringAsync());

        // A connection made before keeps working with the certificate it was made with.
        Assert.Equal(_first.Thumbprint, Thumbprint(open));
        await open.WriteAsync("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"u8.ToArray());
        var reply = new byte[12];
        await open.ReadExactlyAsync(reply).AsTask().WaitAsync(s_bound);
        Assert.Equal("HTTP/1.1 200"u8.ToArray(), reply);
    }

    [Fact]
    public async Task PemFilesSwappedByRename_NewHandshakesPresentTheNewCertificateWithin5Seconds()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath);
        Assert.Equal(_first.Thumbprint, await PresentedAsync(server.Address));

        // As certbot's hooks and most deploy tools do: each file whole, by rename.
        File.Move(_renewed.KeyPath, _first.KeyPath, overwrite: true);
        File.Move(_renewed.CertPath, _first.CertPath, overwrite: true);
        var elapsed = await UntilPresentedAsync(server.Address, _renewed.Thumbprint);

        Assert.True(elapsed < s_bound, $"the new certificate took {elapsed.TotalSeconds:0.0} s");
    }

    [Fact]
    public async Task PfxFileReplaced_NewHandshakesPresentTheNewCertificateWithin5Seconds()
    {
        await using var server = await RunningServer.StartAsync(Site, "--tls-pfx", _first.PfxPath, "--tls-password", TestCertificate.PfxPassword);
        Assert.Equal(_first.Thumbprint, await PresentedAsync(server.Address));

        File.Move(_renewed.PfxPath, _first.PfxPath, overwrite: true);
        var elapsed = await UntilPresentedAsync(server.Address, _renewed.Thumbprint);

        Assert.True(elapsed < s_bound, $"the new certificate took {elapsed.TotalSeconds:0.0} s");
    }

    [Fact]
    public async Task FilesThatDoNotLoad_KeepTheOldCertificateAndAreReportedOnce()
    {
        using var server = ServerProcess.Start(Site, "--port", "0", "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath);
        var address = await server.AddressAsync();
        Assert.Equal(_first.Thumbprint, await PresentedAsync(address));

        // The new certificate cut off half-way, beside the old key.
        var renewedPem = await File.ReadAllTextAsync(_renewed.CertPath);
        await File.WriteAllTextAsync(_first.CertPath, renewedPem[..(renewedPem.Length / 2)]);
        var warning = await server.LineAsync("do not load", TimeSpan.FromSeconds(10));

        Assert.Contains(_first.Thumbprint, warning);
        Assert.Contains($"--tls-cert (command line): '{_first.CertPath}' holds no complete PEM certificate", warning);
        Assert.Equal(_first.Thumbprint, await PresentedAsync(address));

        // Another broken state (the whole certificate, still beside the old key), then the pair.
        await File.WriteAllTextAsync(_first.CertPath, renewedPem);
        // Nothing is printed for this state, so there is nothing to await: two looks' time.
        await Task.Delay(Peregrine.Server.Hosting.CertificateReloader.Interval * 2);
        Assert.Equal(_first.Thumbprint, await PresentedAsync(address));
        File.Copy(_renewed.KeyPath, _first.KeyPath, overwrite: true);
        var loaded = await server.LineAsync("Loaded the changed certificate", TimeSpan.FromSeconds(10));

        Assert.Contains(_renewed.Thumbprint, loaded);
        Assert.Equal(_renewed.Thumbprint, await PresentedAsync(address));
        Assert.Single(server.Errors.Split('\n'), line => line.Contains("do not load", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("cert")]
    [InlineData("key")]
    public void HalfWrittenFileAtStartUp_IsAnErrorNamingIt(string which)
    {
        var path = which == "cert" ? _first.CertPath : _first.KeyPath;
        var pem = File.ReadAllText(path);
        File.WriteAllText(path, pem[..(pem.Length / 2)]);

        var loaded = Peregrine.Server.Configuration.SettingsLoader.Load(
            [Site, "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath], new Dictionary<string, string>());

        Assert.StartsWith($"--tls-{which} (command line): '{path}' holds no complete PEM", Assert.Single(loaded.Errors));
    }

    [Fact]
    public void UnchangedFiles_AreFoundSoWithoutReadingThemIntoNewArrays()
    {
        var settings = Peregrine.Server.Configuration.SettingsLoader.Load(
            [Site, "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath], new Dictionary<string, string>()).Settings!;
        using var _ = settings;
        var seen = new Peregrine.Server.Connections.Tls.CertificateFiles(File.ReadAllBytes(_first.CertPath), File.ReadAllBytes(_first.KeyPath));
        Assert.True(Peregrine.Server.Configuration.CertificateLoader.Unchanged(settings, seen));

        // The reloader asks every second: reading both files whole allocated about 35 KB each time.
        var before = GC.GetAllocatedBytesForCurrentThread();
        for (var i = 0; i < 100; i++)
        {
            Assert.True(Peregrine.Server.Configuration.CertificateLoader.Unchanged(settings, seen));
        }

        var perCall = (GC.GetAllocatedBytesForCurrentThread() - before) / 100;
        Assert.True(perCall < 1024, $"{perCall} B allocated per check");
    }

    [Theory]
    [InlineData("one byte of the certificate")]
    [InlineData("one byte of the key")]
    [InlineData("the key grown")]
    [InlineData("the certificate gone")]
    public void ChangedOrMissingFiles_AreNotUnchanged(string change)
    {
        var settings = Peregrine.Server.Configuration.SettingsLoader.Load(
            [Site, "--tls-cert", _first.CertPath, "--tls-key", _first.KeyPath], new Dictionary<string, string>()).Settings!;
        using var _ = settings;
        var seen = new Peregrine.Server.Connections.Tls.CertificateFiles(File.ReadAllBytes(_first.CertPath), File.ReadAllBytes(_first.KeyPath));
        switch (change)
        {
            case "one byte of the certificate":
                Flip(_first.CertPath, seen.Main.Length - 40);
                break;
            case "one byte of the key":
                Flip(_first.KeyPath, 40);
                break;
            case "the key grown":
                File.AppendAllText(_first.KeyPath, "\n");
                break;
            default:
                File.Delete(_first.CertPath);
                break;
        }

        Assert.False(Peregrine.Server.Configuration.CertificateLoader.Unchanged(settings, seen));

        static void Flip(string path, int at)
        {
            var bytes = File.ReadAllBytes(path);
            bytes[at] ^= 1;
            File.WriteAllBytes(path, bytes);
        }
    }

    /// <summary>Makes new connections until one presents <paramref name="thumbprint"/>; how long that took from the call.</summary>
    private static async Task<TimeSpan> UntilPresentedAsync(Uri address, string thumbprint)
    {
        var clock = Stopwatch.StartNew();
        while (await PresentedAsync(address) != thumbprint)
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(15), "the new certificate was never presented");
            await Task.Delay(50);
        }

        return clock.Elapsed;
    }

    private static async Task<string> PresentedAsync(Uri address)
    {
        await using var tls = await ConnectAsync(address);
        return Thumbprint(tls);
    }

    private static string Thumbprint(SslStream tls) => ((X509Certificate2)tls.RemoteCertificate!).Thumbprint;

    /// <summary>A full handshake (no session resumption, which would skip the certificate).</summary>
    private static async Task<SslStream> ConnectAsync(Uri address)
    {
        var socket = new TcpClient();
        await socket.ConnectAsync(address.Host, address.Port);
        var tls = new SslStream(socket.GetStream(), leaveInnerStreamOpen: false);
        using var timeout = new CancellationTokenSource(s_bound);
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "localhost",
            AllowTlsResume = false,
            ApplicationProtocols = [SslApplicationProtocol.Http11],
            RemoteCertificateValidationCallback = static (_, _, _, _) => true,
        }, timeout.Token);
        return tls;
    }
}
