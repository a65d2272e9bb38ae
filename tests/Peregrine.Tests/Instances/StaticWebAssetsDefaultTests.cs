using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Instances;

/// <summary>
/// One registration rule for every <c>AddPeregrine</c> overload (docs/library.md, "Which files an
/// instance serves"): an instance whose Root is left to the host, or names its web root, serves
/// the static web assets too; one with a Root of its own serves that alone. On a real host in
/// Development whose runtime manifest (named by the <c>staticWebAssets</c> setting, as the SDK's
/// tooling names it) adds a class library's <c>wwwroot</c> under <c>/_content/Lib</c>.
/// </summary>
public sealed class StaticWebAssetsDefaultTests : IDisposable
{
    private readonly TempTree _tree = new();

    public StaticWebAssetsDefaultTests()
    {
        _tree.Write("App/wwwroot/app.css", "app { }");
        _tree.Write("Lib/wwwroot/lib.css", "lib { }");
        _tree.Write("Other/page.html", "other");
        var root = _tree.Root + "/";
        _tree.Write("manifests/RegistrationApp.staticwebassets.runtime.json", $$"""
            { "ContentRoots": [ "{{root}}App/wwwroot/", "{{root}}Lib/wwwroot/" ],
              "Root": { "Children": {
                "_content": { "Children": {
                  "Lib": { "Children": null, "Asset": null, "Patterns": [ { "ContentRootIndex": 1, "Pattern": "**", "Depth": 2 } ] } },
                  "Asset": null, "Patterns": null } },
                "Asset": null, "Patterns": [ { "ContentRootIndex": 0, "Pattern": "**", "Depth": 0 } ] } }
            """);
    }

    public void Dispose() => _tree.Dispose();

    private string WebRoot => Path.Combine(_tree.Root, "App", "wwwroot");

    private string OtherRoot => Path.Combine(_tree.Root, "Other");

    [Theory]
    [InlineData("no arguments")]
    [InlineData("lambda setting a cache rule")]
    [InlineData("lambda naming the web root")]
    [InlineData("configuration without Root")]
    [InlineData("named, without Root")]
    public async Task RootLeftToTheHost_ServesTheWebRootAndTheManifestsFolders(string form)
    {
        await using var host = await StartAsync(form switch
        {
            "no arguments" => s => s.AddPeregrine(),
            "lambda setting a cache rule" => s => s.AddPeregrine(o => o.CacheRules.Add(new CacheRule("*.css", "no-store"))),
            "lambda naming the web root" => s => s.AddPeregrine(o => o.Root = WebRoot),
            "configuration without Root" => s => s.AddPeregrine(Section(("CacheControl", "public, max-age=60"))),
            _ => s => s.AddPeregrine("assets", _ => { }),
        }, form.StartsWith("named", StringComparison.Ordinal) ? "assets" : "");

        Assert.Equal("app { }", await host.Client.GetStringAsync("/app.css"));
        using var library = await host.Client.GetAsync("/_content/Lib/lib.css");
        Assert.Equal(HttpStatusCode.OK, library.StatusCode);
        Assert.Equal("lib { }", await library.Content.ReadAsStringAsync());
        if (form == "lambda setting a cache rule")
        {
            // The option the lambda set applies to the manifest's files as to the web root's.
            Assert.Equal("no-store", library.Headers.CacheControl?.ToString());
        }
    }

    [Fact]
    public async Task LambdaSettingRequestPath_ServesTheManifestsFoldersUnderIt()
    {
        await using var host = await StartAsync(s => s.AddPeregrine(o => o.RequestPath = "/static"), "");

        Assert.Equal("app { }", await host.Client.GetStringAsync("/static/app.css"));
        Assert.Equal("lib { }", await host.Client.GetStringAsync("/static/_content/Lib/lib.css"));
    }

    [Theory]
    [InlineData("lambda")]
    [InlineData("configuration")]
    [InlineData("named")]
    public async Task RootOfItsOwn_ServesThatRootAlone(string form)
    {
        await using var host = await StartAsync(form switch
        {
            "lambda" => s => s.AddPeregrine(o => o.Root = OtherRoot),
            "configuration" => s => s.AddPeregrine(Section(("Root", OtherRoot))),
            _ => s => s.AddPeregrine("other", o => o.Root = OtherRoot),
        }, form == "named" ? "other" : "");

        Assert.Equal("other", await host.Client.GetStringAsync("/page.html"));
        foreach (var path in (string[])["/_content/Lib/lib.css", "/app.css"])
        {
            using var response = await host.Client.GetAsync(path);
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
            Assert.True(response.Headers.Contains(AppHost.NextHeader), path + " went on to the next middleware.");
        }
    }

    [Fact]
    public async Task NamedRootOfItsOwn_BesideTheUnnamedOne_LeavesTheAssetsToTheWebRootsInstance()
    {
        await using var host = await StartAsync(
            s => s.AddPeregrine().AddPeregrine("other", o => { o.Root = OtherRoot; o.RequestPath = "/other"; }),
            "other",
            alsoUnnamed: true);

        Assert.Equal("lib { }", await host.Client.GetStringAsync("/_content/Lib/lib.css"));
        Assert.Equal("other", await host.Client.GetStringAsync("/other/page.html"));
        using var notInOther = await host.Client.GetAsync("/other/_content/Lib/lib.css");
        Assert.True(notInOther.Headers.Contains(AppHost.NextHeader));
    }

    /// <summary>
    /// A host in Development whose web root is <c>App/wwwroot</c> and whose runtime manifest is in
    /// force (<c>UseStaticWebAssets</c>, as <c>WebApplication.CreateBuilder</c> calls it), serving
    /// the instance <paramref name="instance"/> (empty for the unnamed one).
    /// </summary>
    private Task<AppHost> StartAsync(Action<IServiceCollection> register, string instance, bool alsoUnnamed = false) => AppHost.StartAsync(
        b =>
        {
            b.WebHost.UseSetting(WebHostDefaults.StaticWebAssetsKey, Path.Combine(_tree.Root, "manifests", "RegistrationApp.staticwebassets.runtime.json"));
            b.WebHost.UseStaticWebAssets();
            register(b.Services);
        },
        app =>
        {
            if (alsoUnnamed)
            {
                app.UsePeregrine();
            }

            if (instance.Length == 0)
            {
                app.UsePeregrine();
            }
            else
            {
                app.UsePeregrine(instance);
            }
        },
        options: new WebApplicationOptions
        {
            ApplicationName = "RegistrationApp",
            EnvironmentName = "Development",
            ContentRootPath = Path.Combine(_tree.Root, "App"),
        });

    private static IConfiguration Section(params (string Key, string Value)[] values)
        => new ConfigurationBuilder()
            .AddInMemoryCollection(values.Select(v => KeyValuePair.Create("Peregrine:" + v.Key, (string?)v.Value)))
            .Build()
            .GetSection("Peregrine");
}
