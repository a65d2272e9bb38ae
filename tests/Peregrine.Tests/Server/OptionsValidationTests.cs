using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Options;
using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;
using Peregrine.Validation;

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

    [Theory]
    [InlineData("reserved header", "--header", "Headers")]
    [InlineData("bad header name", "--header", "Headers")]
    [InlineData("control character in a header", "--header", "Headers")]
    [InlineData("origin with a path", "--cors", "CorsOrigins")]
    [InlineData("origin with a query", "--cors", "CorsOrigins")]
    [InlineData("SPA file above the root", "--spa", "SpaFallback")]
    [InlineData("missing root", "ROOT", "Root")]
    public void ServerAndLibrary_ReportOneRule_EachUnderItsOwnName(string mistake, string flag, string option)
    {
        // The server checks its flags with the library's rules: the same problem, worded the
        // same, under the flag's name and source instead of the option's.
        using var tree = new TempTree();
        var options = new PeregrineOptions { Root = tree.Root };
        string[] args = mistake switch
        {
            "reserved header" => Set(() => options.Headers["Content-Type"] = "text/plain", "--header", "Content-Type: text/plain"),
            "bad header name" => Set(() => options.Headers["X Y"] = "1", "--header", "X Y: 1"),
            "control character in a header" => Set(() => options.Headers["X-A"] = "a\u007F", "--header", "X-A: a\u007F"),
            "origin with a path" => Set(() => options.CorsOrigins = ["https://a.example/app"], "--cors=https://a.example/app"),
            "origin with a query" => Set(() => options.CorsOrigins = ["https://a.example?x=1"], "--cors=https://a.example?x=1"),
            "SPA file above the root" => Set(() => options.SpaFallback = "../index.html", "--spa=../index.html"),
            _ => Set(() => options.Root = "/no/such/folder", "/no/such/folder"),
        };
        if (flag != "ROOT")
        {
            args = [tree.Root, .. args];
        }

        var server = Assert.Single(SettingsLoader.Load(args, new Dictionary<string, string>()).Errors);
        var library = Assert.Single(PeregrineOptionsValidator.Collect(options));

        Assert.StartsWith(flag + " (command line): ", server, StringComparison.Ordinal);
        Assert.StartsWith(option + ": ", library, StringComparison.Ordinal);
        Assert.Equal(library[(option.Length + 2)..], server[(flag.Length + " (command line): ".Length)..]);
    }

    [Fact]
    public void UsePeregrine_WithoutAddPeregrine_SaysWhatIsMissing()
    {
        var builder = WebApplication.CreateSlimBuilder();
        var app = builder.Build();

        var failure = Assert.Throws<InvalidOperationException>(() => app.UsePeregrine());

        Assert.Contains("AddPeregrine", failure.Message);
    }

    private static string[] Set(Action configure, params string[] args)
    {
        configure();
        return args;
    }
}
