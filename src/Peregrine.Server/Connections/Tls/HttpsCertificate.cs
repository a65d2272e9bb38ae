using System.Net.Security;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;

namespace Peregrine.Server.Connections.Tls;

/// <summary>
/// The certificate every new TLS handshake presents, swapped whole when <see cref="Hosting.CertificateReloader"/>
/// loads a renewed one. Each certificate's handshake options (its <see cref="SslStreamCertificateContext"/>,
/// with the chain built once, and ALPN) are made once, when it is loaded, and handed to every
/// handshake as they are: SslStream copies what it needs from them. Connections already open
/// keep the certificate they were made with.
/// </summary>
internal sealed class HttpsCertificate
{
    // RFC 7301 §6, the IANA registry's identifier for HTTP/1.0.
    private static readonly SslApplicationProtocol s_http10 = new("http/1.0"u8.ToArray());

    private SslServerAuthenticationOptions _options;

    public HttpsCertificate(LoadedCertificate certificate)
    {
        Current = certificate;
        _options = OptionsFor(certificate);
    }

    /// <summary>The certificate new handshakes present.</summary>
    public LoadedCertificate Current { get; private set; }

    /// <summary>The handshake options in force: those of the certificate loaded last.</summary>
    public SslServerAuthenticationOptions Options => Volatile.Read(ref _options);

    /// <summary>Kestrel's per-connection TLS callback, reading the options in force as the handshake starts.</summary>
    public TlsHandshakeCallbackOptions CreateHandshakeOptions() => new()
    {
        OnConnection = static context => ValueTask.FromResult(((HttpsCertificate)context.State!).Options),
        OnConnectionState = this,
    };

    /// <summary>
    /// TLS on <paramref name="listen"/> with this certificate: Kestrel's handshake for the
    /// connections the listener hands on encrypted, and for those whose TLS it ended below
    /// Kestrel (<see cref="TlsTerminator"/>), the TLS version among the connection's metric tags,
    /// as Kestrel's TLS gives its own (<see cref="TerminatedConnection.TagMetrics"/>).
    /// </summary>
    public void UseOn(ListenOptions listen)
    {
        listen.Use(TerminatedConnection.TagMetrics);
        listen.UseHttps(CreateHandshakeOptions());
    }

    /// <summary>
    /// Makes <paramref name="certificate"/> the one new handshakes present. The one it replaces is
    /// not disposed: a handshake under way may still hold it, and its handles are released by
    /// the garbage collector once no connection refers to it.
    /// </summary>
    public void Replace(LoadedCertificate certificate)
    {
        var options = OptionsFor(certificate);
        Current = certificate;
        Volatile.Write(ref _options, options);
    }

    private static SslServerAuthenticationOptions OptionsFor(LoadedCertificate certificate) => new()
    {
        // Builds the chain now, from the file's own intermediates and the system store, not per
        // handshake; offline: false as Kestrel's own UseHttps(certificate) does, so that an
        // OCSP response can be stapled where the network allows.
        ServerCertificateContext = SslStreamCertificateContext.Create(certificate.Certificate, certificate.Chain, offline: false),

        // What Kestrel offers for Http1AndHttp2 (HttpsConnectionMiddleware.ConfigureAlpn): h2
        // first, and no renegotiation, which HTTP/2 forbids (RFC 9113 §9.2.1). Then http/1.0,
        // as nginx offers it: a client that offers only that (curl --http1.0) otherwise fails
        // the handshake with no_application_protocol (RFC 7301 §3.2). Kestrel serves any ALPN
        // but h2 as HTTP/1.x, and answers HTTP/1.0 with an HTTP/1.1 status line.
        ApplicationProtocols = [SslApplicationProtocol.Http2, SslApplicationProtocol.Http11, s_http10],
        AllowRenegotiation = false,
    };
}
