using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Amazon.Runtime;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// The bucket client's HTTP: every answer but an object's body is read into memory, off the socket
/// thread, before the SDK parses it.
/// </summary>
/// <remarks>
/// The SDK parses listings and errors with a synchronous XML reader over the response stream. In
/// the standalone server, socket completions run on the socket engine's own threads (inline I/O,
/// docs/performance.md): a synchronous read there waits for bytes that only that thread can
/// deliver, and the listing, and every connection of that thread, hang. Reading the body
/// asynchronously first, after a hop to the thread pool, leaves the parser nothing to wait for.
/// </remarks>
internal sealed class BucketHttp : HttpClientFactory
{
    private readonly Lazy<HttpClient> _client;

    public BucketHttp(TimeSpan timeout) => _client = new(() => Create(timeout));

    /// <summary>The one client of this bucket source: the SDK asks for a client per request when it does not cache them.</summary>
    public override HttpClient CreateHttpClient(IClientConfig clientConfig) => _client.Value;

    private static HttpClient Create(TimeSpan timeout)
    {
        var sockets = new SocketsHttpHandler
        {
            ConnectTimeout = TimeSpan.FromSeconds(10),
            PooledConnectionLifetime = TimeSpan.FromMinutes(2),
            MaxConnectionsPerServer = 64,
            AutomaticDecompression = System.Net.DecompressionMethods.None,
            AllowAutoRedirect = false,
        };

        // AWS_CA_BUNDLE, as the SDK's own client takes it: the roots a private store's
        // certificate is checked against.
        if (Environment.GetEnvironmentVariable("AWS_CA_BUNDLE") is { Length: > 0 } bundle && File.Exists(bundle))
        {
            var roots = new X509Certificate2Collection();
            roots.ImportFromPemFile(bundle);
            var policy = new X509ChainPolicy { TrustMode = X509ChainTrustMode.CustomRootTrust };
            policy.CustomTrustStore.AddRange(roots);
            sockets.SslOptions = new SslClientAuthenticationOptions { CertificateChainPolicy = policy };
        }

        return new HttpClient(new BufferingHandler(sockets)) { Timeout = timeout };
    }

    public override bool UseSDKHttpClientCaching(IClientConfig clientConfig) => false;

    public override bool DisposeHttpClientsAfterUse(IClientConfig clientConfig) => false;

    public override string GetConfigUniqueString(IClientConfig clientConfig) => "peregrine-bucket";

    private sealed class BufferingHandler(HttpMessageHandler inner) : DelegatingHandler(inner)
    {
        protected override async Task<HttpResponseMessage> SendAsync(HttpRequestMessage request, CancellationToken cancellationToken)
        {
            var response = await base.SendAsync(request, cancellationToken).ConfigureAwait(false);

            // Off the socket thread: what follows, the SDK's parsing included, may block.
            await Task.Yield();

            // An object's body (a successful GET that is not a listing) is streamed and read
            // asynchronously by BucketClient; everything else is small XML.
            var objectBody = request.Method == HttpMethod.Get && response.IsSuccessStatusCode
                && request.RequestUri?.Query.Contains("list-type=", StringComparison.Ordinal) != true;
            if (!objectBody)
            {
                await response.Content.LoadIntoBufferAsync(cancellationToken).ConfigureAwait(false);
                await Task.Yield();
            }

            return response;
        }
    }
}
