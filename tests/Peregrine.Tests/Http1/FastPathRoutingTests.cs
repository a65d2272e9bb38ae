using System.Net;
using Microsoft.AspNetCore.Builder;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1;

/// <summary>Which requests the fast path answers itself, and which reach the pipeline.</summary>
public sealed class FastPathRoutingTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;
    private int _pipelineRequests;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("docs/index.html", "docs");
        _tree.Write("a b.txt", "spaced");
        _host = await PeregrineHost.StartAsync(
            _tree.Root,
            before: app => app.Use((context, next) =>
            {
                Interlocked.Increment(ref _pipelineRequests);
                return next(context);
            }),
            fastPath: true);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    [InlineData("/index.html", null, false)]
    [InlineData("/index.html?v=2", null, false)]
    [InlineData("/", null, false)]
    [InlineData("/docs/", null, false)]
    [InlineData("/index.html", "bytes=0-1", false)]
    [InlineData("/index.html", "bytes=10-", true)]
    [InlineData("/docs", null, true)]
    [InlineData("/missing", null, true)]
    [InlineData("/a%20b.txt", null, true)]
    public async Task Request_TakesTheFastPathOnlyWhenItIsPlain(string path, string? range, bool viaPipeline)
    {
        // A fresh connection each time: once a connection is handed to Kestrel it stays there.
        using var client = new HttpClient(new SocketsHttpHandler { AllowAutoRedirect = false, PooledConnectionLifetime = TimeSpan.Zero });
        using var request = new HttpRequestMessage(HttpMethod.Get, new Uri(_host.Address, path));
        request.Headers.ConnectionClose = true;
        if (range is not null)
        {
            request.Headers.TryAddWithoutValidation("Range", range);
        }

        var before = Volatile.Read(ref _pipelineRequests);
        using var response = await client.SendAsync(request);

        Assert.NotEqual(HttpStatusCode.InternalServerError, response.StatusCode);
        Assert.Equal(viaPipeline, Volatile.Read(ref _pipelineRequests) > before);
    }
}
