using System.Net;
using Microsoft.AspNetCore.Authentication;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Routing;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Endpoints;

/// <summary>endpoints.MapPeregrine(pattern): files as an endpoint, with endpoint metadata.</summary>
public sealed class MapPeregrineTests : IDisposable
{
    private readonly TempTree _tree = new();
    private readonly TempTree _private = new();

    public MapPeregrineTests()
    {
        _tree.Write("a.txt", "public a");
        _tree.Write("docs/index.html", "docs");
        _tree.Write("private/report.txt", "in the public root");
        _private.Write("report.txt", "private report");
    }

    public void Dispose()
    {
        _tree.Dispose();
        _private.Dispose();
    }

    private static void AddAuth(WebApplicationBuilder b)
    {
        b.Services.AddAuthentication(TestAuthentication.Name).AddScheme<AuthenticationSchemeOptions, TestAuthentication>(TestAuthentication.Name, null);
        b.Services.AddAuthorization();
    }

    private static void UseAuth(WebApplication app)
    {
        app.UseAuthentication();
        app.UseAuthorization();
    }

    /// <summary>The unnamed instance mapped at /files/{**path} with RequireAuthorization, and nothing else.</summary>
    private Task<AppHost> StartWithAuthorizedFilesAsync(bool fastPath) => AppHost.StartAsync(
        b =>
        {
            AddAuth(b);
            b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; });
        },
        app => AppHost.Routed(app, a =>
        {
            UseAuth(a);
            a.MapPeregrine("/files/{**path}").RequireAuthorization();
        }),
        fastPath);

    [Fact]
    public async Task MapPeregrine_ServesFilesUnderThePattern()
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app => AppHost.Routed(app, a => a.MapPeregrine("/files/{**path}")));

        Assert.Equal("public a", await host.Client.GetStringAsync("/files/a.txt"));
        Assert.Equal("docs", await host.Client.GetStringAsync("/files/docs/"));
        using var outside = await host.Client.GetAsync("/a.txt");
        Assert.True(outside.Headers.Contains(AppHost.NextHeader));
    }

    [Fact]
    public async Task MapPeregrine_NoSuchFile_Is404FromTheEndpoint()
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app => AppHost.Routed(app, a => a.MapPeregrine("/files/{**path}")));

        using var response = await host.Client.GetAsync("/files/missing.txt");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.False(response.Headers.Contains(AppHost.NextHeader));
    }

    [Theory]
    [InlineData("/files/docs", "/files/docs/")]
    [InlineData("/files/docs?x=1", "/files/docs/?x=1")]
    public async Task MapPeregrine_FolderWithoutSlash_RedirectsUnderThePrefix(string path, string location)
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; }),
            app => AppHost.Routed(app, a => a.MapPeregrine("/files/{**path}")));

        using var response = await host.Client.GetAsync(path);

        Assert.Equal(HttpStatusCode.MovedPermanently, response.StatusCode);
        Assert.Equal(location, response.Headers.Location!.OriginalString);
    }

    [Fact]
    public async Task RequireAuthorization_WithoutAUser_Is401_AndWithOne_ServesTheFile()
    {
        await using var host = await StartWithAuthorizedFilesAsync(fastPath: false);

        using var anonymous = await host.Client.GetAsync("/files/a.txt");
        using var request = new HttpRequestMessage(HttpMethod.Get, "/files/a.txt");
        request.Headers.Add(TestAuthentication.UserHeader, "ada");
        using var signedIn = await host.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.Unauthorized, anonymous.StatusCode);
        Assert.Equal(HttpStatusCode.OK, signedIn.StatusCode);
        Assert.Equal("public a", await signedIn.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task FastPath_WithTheInstanceMappedAsAnEndpoint_DoesNotBypassAuthorization()
    {
        await using var host = await StartWithAuthorizedFilesAsync(fastPath: true);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var mapped = await host.GetOnNewConnectionAsync("/files/a.txt");
        using var unmounted = await host.GetOnNewConnectionAsync("/a.txt");

        Assert.Equal(HttpStatusCode.Unauthorized, mapped.StatusCode);

        // The instance is not mounted at the root: the pipeline does not serve /a.txt, so
        // the fast path must not either.
        Assert.Equal(HttpStatusCode.NotFound, unmounted.StatusCode);
        Assert.Equal(2, host.PipelineRequests);
    }

    [Fact]
    public async Task FastPath_PathUnderAnAuthorizedEndpoint_IsHandedToThePipeline()
    {
        // The root instance also holds private/report.txt, but the pipeline runs authorization
        // for the "private" endpoint's paths before UsePeregrine: the answer is 401, not the file.
        await using var host = await AppHost.StartAsync(
            b =>
            {
                AddAuth(b);
                b.Services
                    .AddPeregrine(o => { o.Root = _tree.Root; o.Watch.Enabled = false; })
                    .AddPeregrine("private", o => { o.Root = _private.Root; o.Watch.Enabled = false; });
            },
            app => AppHost.Routed(app, a =>
            {
                UseAuth(a);
                a.UsePeregrine();
                a.MapPeregrine("/private/{**path}", "private").RequireAuthorization();
            }),
            fastPath: true);
        await host.Services.GetRequiredService<FileCatalog>().Ready;

        using var root = await host.GetOnNewConnectionAsync("/a.txt");
        Assert.Equal(HttpStatusCode.OK, root.StatusCode);
        Assert.Equal(0, host.PipelineRequests);

        using var guarded = await host.GetOnNewConnectionAsync("/private/report.txt");
        Assert.Equal(HttpStatusCode.Unauthorized, guarded.StatusCode);
        Assert.Equal(1, host.PipelineRequests);
    }

    [Fact]
    public void MapPeregrine_PatternWithoutACatchAll_IsRefused()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Services.AddPeregrine(o => o.Root = _tree.Root);
        using var app = builder.Build();

        var error = Assert.Throws<ArgumentException>(() => app.MapPeregrine("/files/{name}"));

        Assert.Contains("{**path}", error.Message);
    }

    [Fact]
    public void MapPeregrine_InstanceWithARequestPath_IsRefusedNamingTheOption()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Services.AddPeregrine(o => { o.Root = _tree.Root; o.RequestPath = "/static"; });
        using var app = builder.Build();

        var error = Assert.Throws<InvalidOperationException>(() => app.MapPeregrine("/files/{**path}"));

        Assert.StartsWith("RequestPath:", error.Message);
    }
}
