using System.Net;
using Microsoft.Extensions.Options;
using Peregrine.Tests.Infrastructure;
using Peregrine.Validation;

namespace Peregrine.Tests.Sources;

/// <summary>
/// Several folders in one index (<see cref="PeregrineOptions.Mounts"/>): each served under its
/// URL path as the root is, overlaid in the stated order, watched, and checked at start-up.
/// </summary>
[Collection(Live.LiveCollection.Name)]
public sealed class MountTests
{
    [Fact]
    public async Task MountedFolder_IsServedUnderItsUrlPath_WithTheSameFieldsAsFromARoot()
    {
        using var site = new TempTree();
        using var docs = new TempTree();
        site.Write("index.html", "home");
        docs.Write("guide/intro.html", "<p>intro</p>");
        docs.Write("guide/index.html", "<p>guide</p>");
        docs.Write("app.css", "body{}");
        await using var host = await PeregrineHost.StartAsync(site.Root, options => options.Mounts.Add(new ContentMount { UrlPath = "/docs", Root = docs.Root }));
        await using var alone = await PeregrineHost.StartAsync(docs.Root);

        Assert.Equal("home", await host.Client.GetStringAsync("/index.html"));
        foreach (var (mounted, own) in new[] { ("/docs/guide/intro.html", "/guide/intro.html"), ("/docs/app.css", "/app.css") })
        {
            using var response = await host.Client.GetAsync(mounted);
            using var reference = await alone.Client.GetAsync(own);
            Assert.Equal(HttpStatusCode.OK, response.StatusCode);
            Assert.Equal(await reference.Content.ReadAsStringAsync(), await response.Content.ReadAsStringAsync());
            Assert.Equal(reference.Headers.ETag, response.Headers.ETag);
            Assert.Equal(reference.Content.Headers.ContentType, response.Content.Headers.ContentType);
            Assert.Equal(reference.Content.Headers.LastModified, response.Content.Headers.LastModified);
        }

        // A folder's own path redirects to its slash form, which serves its index, as under the root.
        using var folder = await host.Client.GetAsync("/docs/guide");
        Assert.Equal(HttpStatusCode.MovedPermanently, folder.StatusCode);
        Assert.Equal("/docs/guide/", folder.Headers.Location?.OriginalString);
        Assert.Equal("<p>guide</p>", await host.Client.GetStringAsync("/docs/guide/"));
    }

    [Fact]
    public async Task APathSeveralFoldersHold_IsServedFromTheLongestUrlPath_ThenTheRoot_ThenTheMountsInOrder()
    {
        using var site = new TempTree();
        using var first = new TempTree();
        using var second = new TempTree();
        using var docs = new TempTree();
        site.Write("shared.txt", "root");
        site.Write("docs/page.txt", "root's docs");
        site.Write("docs/only-in-root.txt", "root only");
        first.Write("shared.txt", "first");
        first.Write("both.txt", "first");
        first.Write("first.txt", "first only");
        second.Write("both.txt", "second");
        second.Write("second.txt", "second only");
        docs.Write("page.txt", "mounted docs");
        await using var host = await PeregrineHost.StartAsync(site.Root, options =>
        {
            options.Mounts.Add(new ContentMount { UrlPath = "/", Root = first.Root });
            options.Mounts.Add(new ContentMount { UrlPath = "/", Root = second.Root });
            options.Mounts.Add(new ContentMount { UrlPath = "/docs", Root = docs.Root });
        });

        Assert.Equal("root", await host.Client.GetStringAsync("/shared.txt"));
        Assert.Equal("first", await host.Client.GetStringAsync("/both.txt"));
        Assert.Equal("first only", await host.Client.GetStringAsync("/first.txt"));
        Assert.Equal("second only", await host.Client.GetStringAsync("/second.txt"));
        Assert.Equal("mounted docs", await host.Client.GetStringAsync("/docs/page.txt"));

        // Overlaid, not hidden: what the mount lacks comes from the folder below it.
        Assert.Equal("root only", await host.Client.GetStringAsync("/docs/only-in-root.txt"));
    }

    [Fact]
    public async Task MountLimitedToFiles_ServesThoseAlone()
    {
        using var site = new TempTree();
        using var package = new TempTree();
        site.Write("index.html", "home");
        package.Write("dist/lib.js", "lib");
        package.Write("dist/other.js", "other");
        package.Write("README.md", "readme");
        await using var host = await PeregrineHost.StartAsync(site.Root, options =>
            options.Mounts.Add(new ContentMount { UrlPath = "/vendor", Root = package.Root, Files = ["/dist/lib.js"] }));

        Assert.Equal("lib", await host.Client.GetStringAsync("/vendor/dist/lib.js"));
        foreach (var path in new[] { "/vendor/dist/other.js", "/vendor/README.md" })
        {
            using var response = await host.Client.GetAsync(path);
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        }
    }

    [Fact]
    public async Task MountBelowFoldersTheRootLacks_IsReachable_AndListedFromTheRoot()
    {
        using var site = new TempTree();
        using var lib = new TempTree();
        site.Write("page.txt", "page");
        lib.Write("index.html", "library home");
        lib.Write("lib.css", "css");
        await using var host = await PeregrineHost.StartAsync(site.Root, options =>
        {
            options.DirectoryListing = true;
            options.Mounts.Add(new ContentMount { UrlPath = "/_content/Lib", Root = lib.Root });
        });

        Assert.Equal("library home", await host.Client.GetStringAsync("/_content/Lib/"));
        using var redirect = await host.Client.GetAsync("/_content/Lib");
        Assert.Equal(HttpStatusCode.MovedPermanently, redirect.StatusCode);
        Assert.Equal("/_content/Lib/", redirect.Headers.Location?.OriginalString);
        Assert.Contains("_content", await host.Client.GetStringAsync("/"));
        Assert.Contains("Lib", await host.Client.GetStringAsync("/_content/"));
    }

    [Fact]
    public async Task ChangesInAMountedFolder_AreServed_AndARemovedFileRevealsTheOneBelow()
    {
        using var site = new TempTree();
        using var docs = new TempTree();
        site.Write("docs/page.txt", "root's page");
        docs.Write("page.txt", "mounted v1");
        docs.Write("guide/a.txt", "a");
        await using var host = await PeregrineHost.StartAsync(site.Root, options => options.Mounts.Add(new ContentMount { UrlPath = "/docs", Root = docs.Root }));
        Assert.Equal("mounted v1", await host.Client.GetStringAsync("/docs/page.txt"));

        docs.Write("page.txt", "mounted v2");
        await EventuallyAsync(host, "/docs/page.txt", "mounted v2");

        docs.Write("guide/new.txt", "new file");
        await EventuallyAsync(host, "/docs/guide/new.txt", "new file");

        docs.Write("fresh/deep/file.txt", "new folder");
        await EventuallyAsync(host, "/docs/fresh/deep/file.txt", "new folder");

        File.Delete(Path.Combine(docs.Root, "page.txt"));
        await EventuallyAsync(host, "/docs/page.txt", "root's page");

        File.Delete(Path.Combine(docs.Root, "guide/a.txt"));
        await EventuallyAsync(host, "/docs/guide/a.txt", null);
    }

    [Fact]
    public async Task AFolderMountedTwice_AnswersEachUrlPath()
    {
        using var site = new TempTree();
        using var shared = new TempTree();
        shared.Write("font.woff2", "v1");
        await using var host = await PeregrineHost.StartAsync(site.Root, options =>
        {
            options.Mounts.Add(new ContentMount { UrlPath = "/a", Root = shared.Root });
            options.Mounts.Add(new ContentMount { UrlPath = "/b", Root = shared.Root });
        });
        Assert.Equal("v1", await host.Client.GetStringAsync("/a/font.woff2"));
        Assert.Equal("v1", await host.Client.GetStringAsync("/b/font.woff2"));

        shared.Write("font.woff2", "v2");
        await EventuallyAsync(host, "/a/font.woff2", "v2");
        await EventuallyAsync(host, "/b/font.woff2", "v2");
    }

    [Theory]
    [InlineData("docs", "Mounts[0].UrlPath")]
    [InlineData("/docs/", "Mounts[0].UrlPath")]
    [InlineData("/a//b", "Mounts[0].UrlPath")]
    [InlineData("/a/../b", "Mounts[0].UrlPath")]
    [InlineData("/a%20b", "Mounts[0].UrlPath")]
    [InlineData("/.git", "Mounts[0].UrlPath")]
    public void AMountPathThatCannotBeServed_StopsStartUp_NamingTheOption(string urlPath, string option)
    {
        using var folder = new TempTree();
        var errors = Validate(new ContentMount { UrlPath = urlPath, Root = folder.Root });
        Assert.Contains(errors, error => error.StartsWith(option + ":", StringComparison.Ordinal) && error.Contains(urlPath, StringComparison.Ordinal));
    }

    [Fact]
    public void AMissingFolderOrABadFileName_StopsStartUp_NamingTheOption()
    {
        var errors = Validate(new ContentMount { UrlPath = "/x", Root = "/no/such/folder", Files = ["css/a.css", "/ok.css", "/a/../b.css"] });
        Assert.Contains(errors, error => error.StartsWith("Mounts[0].Root:", StringComparison.Ordinal) && error.Contains("/no/such/folder", StringComparison.Ordinal));
        Assert.Contains(errors, error => error.StartsWith("Mounts[0].Files[0]:", StringComparison.Ordinal));
        Assert.DoesNotContain(errors, error => error.StartsWith("Mounts[0].Files[1]:", StringComparison.Ordinal));
        Assert.Contains(errors, error => error.StartsWith("Mounts[0].Files[2]:", StringComparison.Ordinal));
    }

    private static List<string> Validate(ContentMount mount)
    {
        using var root = new TempTree();
        var options = new PeregrineOptions { Root = root.Root };
        options.Mounts.Add(mount);
        var result = new PeregrineOptionsValidator().Validate(null, options);
        return result.Failed ? [.. result.Failures] : [];
    }

    /// <summary>Waits (bounded) until <paramref name="path"/> answers <paramref name="expected"/> (null: 404).</summary>
    private static async Task EventuallyAsync(PeregrineHost host, string path, string? expected)
    {
        using var guard = new HangGuard(TimeSpan.FromSeconds(15));
        string? last = null;
        while (!guard.Token.IsCancellationRequested)
        {
            using var response = await host.Client.GetAsync(path);
            last = response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadAsStringAsync() : null;
            if (last == expected && (expected is not null || response.StatusCode == HttpStatusCode.NotFound))
            {
                return;
            }

            await Task.Delay(25);
        }

        Assert.Fail($"{path} still answered {last ?? "(not 200)"}, not {expected ?? "404"}.");
    }
}
