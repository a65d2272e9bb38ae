using System.Net;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Server;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server;

public sealed class ServerTests
{
    private static string SampleSite => Path.Combine(RepositoryRoot.Path, "samples", "site");

    [Fact]
    public async Task StandaloneServer_ServesSampleSiteAndAnswers404Otherwise()
    {
        var commandLine = CommandLine.TryParse([SampleSite, "--port", "0", "--quiet"], out _)!;
        await using var app = ServerHost.Build(commandLine, []);
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        using var client = new HttpClient { BaseAddress = new Uri(address) };

        using var home = await client.GetAsync("/");
        using var missing = await client.GetAsync("/no-such-file.html");
        using var hidden = await client.GetAsync("/.env");

        Assert.Equal(HttpStatusCode.OK, home.StatusCode);
        Assert.Contains("Peregrine", await home.Content.ReadAsStringAsync());
        Assert.Equal(HttpStatusCode.NotFound, missing.StatusCode);
        Assert.Equal(HttpStatusCode.NotFound, hidden.StatusCode);
        await app.StopAsync();
    }

    [Fact]
    public async Task StandaloneServer_SpeaksHttp2ByPriorKnowledgeAndHttp11OnOnePort()
    {
        var commandLine = CommandLine.TryParse([SampleSite, "--port", "0", "--quiet"], out _)!;
        await using var app = ServerHost.Build(commandLine, []);
        await app.StartAsync();
        var address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        using var client = new HttpClient { BaseAddress = new Uri(address) };

        using var h2 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });
        using var h1 = await client.SendAsync(new HttpRequestMessage(HttpMethod.Get, "/css/site.css")
        {
            Version = HttpVersion.Version11,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
        });

        Assert.Equal(HttpVersion.Version20, h2.Version);
        Assert.Equal(HttpVersion.Version11, h1.Version);
        Assert.Equal(await h1.Content.ReadAsByteArrayAsync(), await h2.Content.ReadAsByteArrayAsync());
        await app.StopAsync();
    }
}
