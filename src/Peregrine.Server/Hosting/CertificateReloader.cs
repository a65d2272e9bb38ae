using Peregrine.Server.Configuration;
using Peregrine.Server.Connections;
using Peregrine.Server.Connections.Tls;

namespace Peregrine.Server.Hosting;

/// <summary>
/// Looks at the certificate files every second and, when their bytes change and hold a valid
/// certificate and key, makes it the one new handshakes present: a renewed certificate (certbot,
/// cert-manager, a Kubernetes secret) is in use within a second or two, without a restart.
/// </summary>
/// <remarks>
/// Polling rather than inotify: renewal tools replace files by rename, swap a symbolic link to a
/// folder (Kubernetes' <c>..data</c>), or write in place, and inotify on the file misses the first
/// two. Reading two files of a few KB once a second costs little next to one handshake (they are
/// compared in a pooled buffer, without allocating), and comparing bytes (not times) sees every
/// change, even a copy that keeps the old time.
/// A pair that does not load (a file written half-way, a new certificate beside the old key)
/// leaves the current certificate in use; it is reported once, and again only after a pair has
/// loaded, however many broken states the files pass through.
/// </remarks>
internal sealed partial class CertificateReloader(ServerSettings settings, HttpsCertificate https, ILogger<CertificateReloader> logger) : BackgroundService
{
    public static readonly TimeSpan Interval = TimeSpan.FromSeconds(1);

    private CertificateFiles _seen = https.Current.Files;
    private bool _reported;

    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        using var timer = new PeriodicTimer(Interval);
        try
        {
            while (await timer.WaitForNextTickAsync(stoppingToken))
            {
                Check();
            }
        }
        catch (OperationCanceledException) when (stoppingToken.IsCancellationRequested)
        {
            // The server is stopping.
        }
    }

    private void Check()
    {
        // The usual tick: nothing changed, found without reading the files into new arrays.
        if (CertificateLoader.Unchanged(settings, _seen))
        {
            return;
        }

        var errors = new List<string>();
        var files = CertificateLoader.Read(settings, errors);
        if (files is not null)
        {
            if (files.SameAs(_seen))
            {
                return;
            }

            _seen = files;
            if (files.SameAs(https.Current.Files))
            {
                // Back to the files in use, after a broken state: nothing to load.
                _reported = false;
                return;
            }
        }

        var loaded = files is null ? null : CertificateLoader.Parse(settings, files, errors);
        if (loaded is null)
        {
            if (!_reported)
            {
                _reported = true;
                KeptCertificate(logger, https.Current.Certificate.Thumbprint, string.Join(" ", errors));
            }

            return;
        }

        _reported = false;
        https.Replace(loaded);
        Reloaded(logger, loaded.Certificate.Subject, loaded.Certificate.Thumbprint, loaded.Certificate.NotAfter.ToUniversalTime());
    }

    [LoggerMessage(201, LogLevel.Information, "Loaded the changed certificate {Subject} ({Thumbprint}, valid until {NotAfter:u}); new connections use it.")]
    private static partial void Reloaded(ILogger logger, string subject, string thumbprint, DateTime notAfter);

    [LoggerMessage(202, LogLevel.Warning, "The certificate files changed but do not load; still using {Thumbprint}. {Problem}")]
    private static partial void KeptCertificate(ILogger logger, string thumbprint, string problem);
}
