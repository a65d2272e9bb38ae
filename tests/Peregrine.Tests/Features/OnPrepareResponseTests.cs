using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Features;

/// <summary>PeregrineOptions.OnPrepareResponse: a hook on every file response, on the middleware path.</summary>
public sealed class OnPrepareResponseTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private readonly List<string> _seen = [];
    private AppHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("app.js", "console.log(1)");
        _tree.Write("docs/index.html", "docs");
        _host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o =>
            {
                o.Root = _tree.Root;
                o.Watch.Enabled = false;
                o.OnPrepareResponse = file =>
                {
                    lock (_seen)
                    {
                        _seen.Add($"{file.Path} {file.Length} {file.ContentType}");
                    }

                    file.Context.Response.Headers["X-Hook"] = "ran";
                };
            }),
            app => app.UsePeregrine(),
            fastPath: true);
        await _host.Services.GetRequiredService<FileCatalog>().Ready;
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task Hook_AddsAHeader_AndSeesTheFile()
    {
        using var response = await _host.Client.GetAsync("/app.js");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("ran", Assert.Single(response.Headers.GetValues("X-Hook")));
        Assert.Contains("/app.js 14 text/javascript; charset=utf-8", _seen);
    }

    [Fact]
    public async Task Hook_RunsOnNotModifiedToo()
    {
        using var first = await _host.Client.GetAsync("/app.js");
        using var request = new HttpRequestMessage(HttpMethod.Get, "/app.js");
        request.Headers.TryAddWithoutValidation("If-None-Match", first.Headers.ETag!.Tag);

        using var second = await _host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.NotModified, second.StatusCode);
        Assert.Equal("ran", Assert.Single(second.Headers.GetValues("X-Hook")));
    }

    [Fact]
    public async Task Hook_DoesNotRunForRedirectsOrMisses()
    {
        using var redirect = await _host.Client.GetAsync("/docs");
        using var miss = await _host.Client.GetAsync("/missing.js");

        Assert.Equal(HttpStatusCode.MovedPermanently, redirect.StatusCode);
        Assert.False(redirect.Headers.Contains("X-Hook"));
        Assert.False(miss.Headers.Contains("X-Hook"));
    }

    [Fact]
    public async Task Hook_Set_FastPathHandsEveryRequestToThePipeline()
    {
        // A plain GET for a file in memory, which the fast path would otherwise answer itself.
        var before = _host.PipelineRequests;

        using var response = await _host.GetOnNewConnectionAsync("/app.js");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("ran", Assert.Single(response.Headers.GetValues("X-Hook")));
        Assert.Equal(before + 1, _host.PipelineRequests);
    }
}
