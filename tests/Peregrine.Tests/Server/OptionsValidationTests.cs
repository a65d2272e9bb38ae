using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;

namespace Peregrine.Tests.Server;

public sealed class OptionsValidationTests
{
    [Fact]
    public async Task BadOptions_StopStartUpReportingEveryErrorByName()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseSetting("urls", "http://127.0.0.1:0");
        builder.Services.AddPeregrine(options =>
        {
            options.Root = "/no/such/folder";
            options.RequestPath = "/static/";
            options.CacheControl = "no-cache\r\nSet-Cookie: x=1";
            options.ContentTypes["md"] = "text/markdown";
            options.DefaultDocuments = ["../index.html"];
            options.MemoryBudget = -1;
        });
        await using var app = builder.Build();

        // Validation runs when the pipeline is built, before the server listens.
        var failure = Assert.Throws<OptionsValidationException>(() => app.UsePeregrine());

        var message = string.Join("\n", failure.Failures);
        foreach (var name in new[] { "Root", "RequestPath", "CacheControl", "ContentTypes", "DefaultDocuments", "MemoryBudget" })
        {
            Assert.Contains(name + ":", message);
        }
    }

    [Fact]
    public void UsePeregrine_WithoutAddPeregrine_SaysWhatIsMissing()
    {
        var builder = WebApplication.CreateSlimBuilder();
        var app = builder.Build();

        var failure = Assert.Throws<InvalidOperationException>(() => app.UsePeregrine());

        Assert.Contains("AddPeregrine", failure.Message);
    }
}
