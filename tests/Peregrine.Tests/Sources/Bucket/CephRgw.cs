using System.Diagnostics;
using System.Net;
using System.Net.Sockets;
using Amazon.Runtime;
using Amazon.S3;
using Amazon.S3.Model;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// A real S3 server for the bucket tests: Ceph's RADOS Gateway (one monitor, one memstore OSD,
/// radosgw), started once per test run by tests/infra/ceph/start in a folder and on ports of the
/// run's own, and stopped at the end. Without Ceph installed the tests that need it are skipped
/// (<see cref="CephFactAttribute"/>), except under CI=true, where they fail: CI installs it (.ci/run).
/// </summary>
public sealed class CephRgw : IAsyncLifetime
{
    public const string AccessKey = "test-access-key";
    public const string SecretKey = "test-secret-key";

    private readonly string _folder = Path.Combine(Path.GetTempPath(), "peregrine-tests", "ceph-" + Guid.NewGuid().ToString("N")[..12]);
    private string? _startOutput;

    /// <summary>http://127.0.0.1:PORT of radosgw.</summary>
    public Uri Endpoint { get; private set; } = null!;

    public AmazonS3Client Client { get; private set; } = null!;

    /// <summary>True when the daemons are installed (the test is skipped otherwise, outside CI).</summary>
    public static bool Installed { get; } = new[] { "ceph-mon", "ceph-osd", "radosgw" }.All(OnPath);

    /// <summary>Under CI the bucket tests must run: a missing Ceph is a failure there, not a skip.</summary>
    public static bool Required => string.Equals(Environment.GetEnvironmentVariable("CI"), "true", StringComparison.OrdinalIgnoreCase);

    public async Task InitializeAsync()
    {
        if (!Installed)
        {
            return;
        }

        var rgwPort = FreePort();
        var monPort = FreePort();
        var script = Path.Combine(RepositoryRoot.Path, "tests", "infra", "ceph", "start");
        var start = new ProcessStartInfo(script) { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.Environment["CEPH_DIR"] = _folder;
        start.Environment["RGW_PORT"] = rgwPort.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment["MON_PORT"] = monPort.ToString(System.Globalization.CultureInfo.InvariantCulture);
        using var process = Process.Start(start)!;
        var output = process.StandardOutput.ReadToEndAsync();
        var errors = process.StandardError.ReadToEndAsync();
        await HangGuard.WithinAsync(process.WaitForExitAsync(), TimeSpan.FromSeconds(180));
        _startOutput = await output + await errors;
        if (process.ExitCode != 0)
        {
            throw new InvalidOperationException($"tests/infra/ceph/start failed ({process.ExitCode}): {_startOutput}");
        }

        Endpoint = new Uri($"http://127.0.0.1:{rgwPort}");
        Client = CreateClient(Endpoint);

        // The in-process hosts take their credentials from the SDK's standard chain, as a
        // deployment does; the endpoint is given to each (it differs when a forwarder is between).
        Environment.SetEnvironmentVariable("AWS_ACCESS_KEY_ID", AccessKey);
        Environment.SetEnvironmentVariable("AWS_SECRET_ACCESS_KEY", SecretKey);
    }

    public async Task DisposeAsync()
    {
        Client?.Dispose();
        if (!Installed || !Directory.Exists(_folder))
        {
            return;
        }

        var stop = new ProcessStartInfo(Path.Combine(RepositoryRoot.Path, "tests", "infra", "ceph", "stop")) { UseShellExecute = false };
        stop.Environment["CEPH_DIR"] = _folder;
        using (var process = Process.Start(stop)!)
        {
            await HangGuard.WithinAsync(process.WaitForExitAsync(), TimeSpan.FromSeconds(60));
        }

        try
        {
            Directory.Delete(_folder, recursive: true);
        }
        catch (IOException)
        {
        }
    }

    /// <summary>Fails the test when the gateway did not start (the fixture only starts it when Ceph is installed).</summary>
    public void EnsureRunning()
    {
        if (Client is null)
        {
            throw new InvalidOperationException(Installed ? "Ceph RGW did not start: " + _startOutput : "Ceph is not installed, and CI=true requires the bucket tests to run: apt-get install ceph-mon ceph-osd radosgw (see .ci/run).");
        }
    }

    public static AmazonS3Client CreateClient(Uri endpoint) => new(new BasicAWSCredentials(AccessKey, SecretKey), new AmazonS3Config
    {
        ServiceURL = endpoint.ToString(),
        AuthenticationRegion = "us-east-1",
        ForcePathStyle = true,
        RequestChecksumCalculation = RequestChecksumCalculation.WHEN_REQUIRED,
        ResponseChecksumValidation = ResponseChecksumValidation.WHEN_REQUIRED,
    });

    /// <summary>A new, empty bucket with a name of its own.</summary>
    public async Task<string> NewBucketAsync()
    {
        EnsureRunning();
        var name = "t-" + Guid.NewGuid().ToString("N")[..20];
        await Client.PutBucketAsync(new PutBucketRequest { BucketName = name });
        return name;
    }

    public Task PutAsync(string bucket, string key, string text) => PutAsync(bucket, key, System.Text.Encoding.UTF8.GetBytes(text));

    public async Task PutAsync(string bucket, string key, byte[] content)
    {
        using var body = new MemoryStream(content);
        await Client.PutObjectAsync(new PutObjectRequest { BucketName = bucket, Key = key, InputStream = body, AutoCloseStream = false });
    }

    public Task DeleteAsync(string bucket, string key) => Client.DeleteObjectAsync(new DeleteObjectRequest { BucketName = bucket, Key = key });

    /// <summary>Uploads every file under <paramref name="folder"/> to <paramref name="prefix"/>, several at once.</summary>
    public async Task UploadTreeAsync(string bucket, string prefix, string folder)
    {
        var files = Directory.EnumerateFiles(folder, "*", SearchOption.AllDirectories).ToList();
        await Parallel.ForEachAsync(files, new ParallelOptions { MaxDegreeOfParallelism = 16 }, async (file, _) =>
            await PutAsync(bucket, prefix + Path.GetRelativePath(folder, file).Replace('\\', '/'), await File.ReadAllBytesAsync(file)));
    }

    public static int FreePort()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        return ((IPEndPoint)listener.LocalEndpoint).Port;
    }

    private static bool OnPath(string tool)
        => (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':').Any(folder => folder.Length > 0 && File.Exists(Path.Combine(folder, tool)));
}

[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class CephCollection : ICollectionFixture<CephRgw>
{
    public const string Name = "Ceph RGW";
}

/// <summary>A test that needs <see cref="CephRgw"/>: skipped, saying why, where Ceph is not installed, unless CI=true.</summary>
public sealed class CephFactAttribute : FactAttribute
{
    private bool _andZstd;

    public CephFactAttribute()
    {
        Decide();
    }

    /// <summary>
    /// The test needs zstd too (a dictionary delta is a zstd frame): skipped, with the reason,
    /// where there is none (the portable parts), as <see cref="Platform.ZstdFactAttribute"/>.
    /// </summary>
    public bool AndZstd
    {
        get => _andZstd;
        set
        {
            _andZstd = value;
            Decide();
        }
    }

    private void Decide()
    {
        if (!CephRgw.Installed && !CephRgw.Required)
        {
            Skip = "Ceph RGW is not installed here (apt-get install ceph-mon ceph-osd radosgw; .ci/run installs it).";
        }
        else if (_andZstd)
        {
            Skip = Platform.ZstdFactAttribute.NoZstd;
        }
    }
}
