using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Instances;

/// <summary>AddPeregrine(IConfiguration): options from a configuration section, validated as any.</summary>
public sealed class ConfigurationBindingTests : IDisposable
{
    private readonly TempTree _tree = new();

    public ConfigurationBindingTests() => _tree.Write("app.js", "console.log(1)");

    public void Dispose() => _tree.Dispose();

    private IConfiguration Section(params (string Key, string Value)[] values)
        => new ConfigurationBuilder()
            .AddInMemoryCollection(values.Select(v => KeyValuePair.Create("Peregrine:" + v.Key, (string?)v.Value)))
            .Build()
            .GetSection("Peregrine");

    [Fact]
    public void Bind_ReadsScalarsListsDictionariesAndNestedOptions()
    {
        var services = new ServiceCollection();
        services.AddPeregrine(Section(
            ("Root", _tree.Root),
            ("RequestPath", "/static"),
            ("CacheControl", "public, max-age=60"),
            ("Headers:X-Content-Type-Options", "nosniff"),
            ("CorsOrigins:0", "https://app.example.com"),
            ("CacheRules:0:Glob", "*.js"),
            ("CacheRules:0:CacheControl", "no-store"),
            ("Watch:CoalescingDelay", "00:00:00.250"),
            ("Compression:Enabled", "false"),
            ("Compression:Encodings:0", "gzip")));
        using var provider = services.BuildServiceProvider();

        var options = provider.GetRequiredService<IOptions<PeregrineOptions>>().Value;

        Assert.Equal(_tree.Root, options.Root);
        Assert.Equal("/static", options.RequestPath.Value);
        Assert.Equal("public, max-age=60", options.CacheControl);
        Assert.Equal("nosniff", options.Headers["X-Content-Type-Options"]);
        Assert.Equal(["https://app.example.com"], options.CorsOrigins);
        var rule = Assert.Single(options.CacheRules);
        Assert.Equal(("*.js", "no-store"), (rule.Glob, rule.CacheControl));
        Assert.Equal(TimeSpan.FromMilliseconds(250), options.Watch.CoalescingDelay);
        Assert.False(options.Compression.Enabled);

        // A list given replaces the default rather than adding to it.
        Assert.Equal(["gzip"], options.Compression.Encodings);
    }

    [Fact]
    public void Bind_ReadsTheDictionaryOptions()
    {
        var services = new ServiceCollection();
        services.AddPeregrine(Section(
            ("Root", _tree.Root),
            ("Compression:Dictionaries:Enabled", "false"),
            ("Compression:Dictionaries:MaxVersions", "6"),
            ("Compression:Dictionaries:MaxBytes", "1048576")));
        using var provider = services.BuildServiceProvider();

        var dictionaries = provider.GetRequiredService<IOptions<PeregrineOptions>>().Value.Compression.Dictionaries;

        Assert.Equal((false, 6, 1L << 20), (dictionaries.Enabled, dictionaries.MaxVersions, dictionaries.MaxBytes));
    }

    [Fact]
    public async Task BoundInstance_Serves()
    {
        await using var host = await AppHost.StartAsync(
            b => b.Services.AddPeregrine("site", Section(("Root", _tree.Root), ("RequestPath", "/site"), ("Headers:X-Bound", "yes"))),
            app => app.UsePeregrine("site"));

        using var response = await host.Client.GetAsync("/site/app.js");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("yes", Assert.Single(response.Headers.GetValues("X-Bound")));
    }

    [Fact]
    public async Task BoundInstance_WithBadValues_StopsStartUpNamingEachOption()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.WebHost.ConfigureKestrel(k => k.Listen(IPAddress.Loopback, 0));
        builder.Services.AddPeregrine(Section(("Root", _tree.Root), ("CorsOrigins:0", "not an origin"), ("MemoryBudget", "-1")));
        await using var app = builder.Build();
        // Options are validated where the instance is first used (here UsePeregrine), or at start.
        var error = await Assert.ThrowsAsync<OptionsValidationException>(() =>
        {
            app.UsePeregrine();
            return app.StartAsync();
        });

        Assert.Contains(error.Failures, f => f.StartsWith("CorsOrigins:", StringComparison.Ordinal));
        Assert.Contains(error.Failures, f => f.StartsWith("MemoryBudget:", StringComparison.Ordinal));
    }

    [Fact]
    public void Bind_RequestPathWithoutALeadingSlash_NamesTheOption()
    {
        var services = new ServiceCollection();
        services.AddPeregrine(Section(("Root", _tree.Root), ("RequestPath", "static")));
        using var provider = services.BuildServiceProvider();

        var error = Assert.Throws<InvalidOperationException>(() => provider.GetRequiredService<IOptions<PeregrineOptions>>().Value);

        Assert.StartsWith("RequestPath:", error.Message);
    }
}
