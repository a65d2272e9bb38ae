using System.Diagnostics;
using System.Net;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Live;

/// <summary>
/// A file is published only once its writer is done: while it is open for writing the previous
/// version is served, whatever the file holds at that moment. Each wait is for a signal the
/// server gives (a marker file becoming visible shows that the events written before it were
/// taken in), never a sleep.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class WholeVersionTests
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(10);

    [NativeFact("inotify close events or a lease, which say that a writer still has the file open")]
    public async Task FileOpenForWriting_IsServedAtItsPreviousVersion_UntilItsWriterCloses()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var tree = new TempTree();
        tree.Write("page.txt", "version 1, whole");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.Watch.SettleTime, options.Watch.OpenWriteLimit) = (TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(60)));
        Assert.Equal("version 1, whole", await host.Client.GetStringAsync("/page.txt"));

        var writer = new FileStream(Path.Combine(tree.Root, "page.txt"), FileMode.Truncate, FileAccess.Write, FileShare.ReadWrite);
        await writer.WriteAsync("version 2, ha"u8.ToArray());
        await writer.FlushAsync();

        // A marker written and closed after the half write: once it is served, the events of
        // the half write have been read too.
        tree.Write("marker.txt", "1");
        await UntilAsync(host, "/marker.txt", "1");
        Assert.Equal("version 1, whole", await host.Client.GetStringAsync("/page.txt"));

        await writer.WriteAsync("lf written"u8.ToArray());
        await writer.DisposeAsync();
        await UntilAsync(host, "/page.txt", "version 2, half written");
    }

    [NativeFact("inotify close events or a lease, which say that a writer still has the file open")]
    public async Task NewFileOpenForWriting_IsNotServed_UntilItsWriterCloses()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var tree = new TempTree();
        tree.Write("index.html", "home");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.Watch.SettleTime, options.Watch.OpenWriteLimit) = (TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(60)));

        var writer = new FileStream(Path.Combine(tree.Root, "new.txt"), FileMode.CreateNew, FileAccess.Write, FileShare.ReadWrite);
        await writer.WriteAsync("first ha"u8.ToArray());
        await writer.FlushAsync();
        tree.Write("marker.txt", "1");
        await UntilAsync(host, "/marker.txt", "1");
        using (var response = await host.Client.GetAsync("/new.txt"))
        {
            Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        }

        await writer.WriteAsync("lf"u8.ToArray());
        await writer.DisposeAsync();
        await UntilAsync(host, "/new.txt", "first half");
    }

    [Fact]
    public async Task FileLeftOpenAndQuiet_IsPublishedAfterTheOpenWriteLimit()
    {
        // A writer that keeps the file open and stops writing: the file is still open, so the
        // settle rule leaves it, and the open-write limit takes it as it stands.
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var tree = new TempTree();
        tree.Write("log.txt", "");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.Watch.SettleTime, options.Watch.OpenWriteLimit) = (TimeSpan.FromMilliseconds(200), TimeSpan.FromMilliseconds(500)));

        await using var writer = new FileStream(Path.Combine(tree.Root, "log.txt"), FileMode.Append, FileAccess.Write, FileShare.ReadWrite);
        await writer.WriteAsync("line 1\n"u8.ToArray());
        await writer.FlushAsync();

        await UntilAsync(host, "/log.txt", "line 1\n");
    }

    [NativeFact("inotify close events or a lease, which say that a writer still has the file open")]
    public async Task FileTruncatedByAWriterThatPauses_IsNotPublishedEmpty_UntilItsWriterCloses()
    {
        // cp and editors open with O_TRUNC and then write; one that pauses in between, past the
        // settle time, leaves an empty file open, quiet and not closed. The pause is the
        // scenario; the marker, written after it, shows the watcher has looked since.
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        var settle = TimeSpan.FromMilliseconds(100);
        using var tree = new TempTree();
        tree.Write("page.txt", "version 1, whole");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.Watch.SettleTime, options.Watch.OpenWriteLimit) = (settle, TimeSpan.FromSeconds(60)));

        var writer = new FileStream(Path.Combine(tree.Root, "page.txt"), FileMode.Truncate, FileAccess.Write, FileShare.ReadWrite);
        await Task.Delay(settle * 5);
        tree.Write("marker.txt", "1");
        await UntilAsync(host, "/marker.txt", "1");
        Assert.Equal("version 1, whole", await host.Client.GetStringAsync("/page.txt"));

        await writer.WriteAsync("version 2"u8.ToArray());
        await writer.DisposeAsync();
        await UntilAsync(host, "/page.txt", "version 2");
    }

    [NativeFact("inotify close events or a lease, which say that a writer still has the file open")]
    public async Task FileOpenedForWritingBeforeItsChangeIsRead_WaitsForThatWriterToClose()
    {
        // A writer's open comes before its truncation, and the truncation's own event can come
        // late when the writer is starved of CPU: a file found open when its change is read is
        // not taken until it is closed. Here one writer closes a new version and a second opens
        // the file before the change is read; the marker, written after that open, shows the
        // change has been looked at.
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var tree = new TempTree();
        tree.Write("page.txt", "version 1");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => (options.Watch.CoalescingDelay, options.Watch.SettleTime, options.Watch.OpenWriteLimit) = (TimeSpan.FromMilliseconds(500), TimeSpan.FromSeconds(30), TimeSpan.FromSeconds(60)));

        tree.Write("page.txt", "version 2");
        var second = new FileStream(Path.Combine(tree.Root, "page.txt"), FileMode.Open, FileAccess.Write, FileShare.ReadWrite);
        tree.Write("marker.txt", "1");
        await UntilAsync(host, "/marker.txt", "1");
        Assert.Equal("version 1", await host.Client.GetStringAsync("/page.txt"));

        second.SetLength(0);
        await second.WriteAsync("version 3"u8.ToArray());
        await second.DisposeAsync();
        await UntilAsync(host, "/page.txt", "version 3");
    }

    [Fact]
    public async Task FolderRenamedIntoTheRoot_IsServed_AndRenamedAway_IsGone()
    {
        using var tree = new TempTree();
        tree.Write("index.html", "home");
        await using var host = await PeregrineHost.StartAsync(tree.Root);
        using var staging = new TempTree();
        staging.Write("v2/app.js", "app");
        staging.Write("v2/css/site.css", "css");

        Directory.Move(Path.Combine(staging.Root, "v2"), Path.Combine(tree.Root, "v2"));
        await UntilAsync(host, "/v2/css/site.css", "css");
        Assert.Equal("app", await host.Client.GetStringAsync("/v2/app.js"));

        Directory.Move(Path.Combine(tree.Root, "v2"), Path.Combine(staging.Root, "old"));
        await UntilStatusAsync(host, "/v2/css/site.css", HttpStatusCode.NotFound);
        using var response = await host.Client.GetAsync("/v2/app.js");
        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
    }

    [Fact]
    public async Task CleanUrls_PageAddedAndRemovedWhileServing_FollowsAtItsCleanUrl()
    {
        if (!OperatingSystem.IsLinux())
        {
            return;
        }

        using var tree = new TempTree();
        tree.Write("index.html", "home");
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.CleanUrls = true);

        tree.Write("contact.html", "contact page");
        await UntilAsync(host, "/contact", "contact page");
        using (var redirect = await host.Client.GetAsync("/contact.html?x=1"))
        {
            Assert.Equal(HttpStatusCode.PermanentRedirect, redirect.StatusCode);
            Assert.Equal("/contact?x=1", redirect.Headers.Location?.OriginalString);
        }

        // A folder of the clean name takes the name back: the page keeps its .html path.
        Directory.CreateDirectory(Path.Combine(tree.Root, "contact"));
        tree.Write("contact/index.html", "contact folder");
        await UntilAsync(host, "/contact.html", "contact page");

        File.Delete(Path.Combine(tree.Root, "contact.html"));
        await UntilStatusAsync(host, "/contact.html", HttpStatusCode.NotFound);
    }

    private static async Task UntilAsync(PeregrineHost host, string path, string body)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            using var response = await host.Client.GetAsync(path);
            var text = response.StatusCode == HttpStatusCode.OK ? await response.Content.ReadAsStringAsync() : null;
            if (text == body)
            {
                return;
            }

            Assert.True(clock.Elapsed < s_limit, $"{path} did not become '{body}' within {s_limit} (last: {response.StatusCode} '{text}')");
            await Task.Delay(10);
        }
    }

    private static async Task UntilStatusAsync(PeregrineHost host, string path, HttpStatusCode status)
    {
        var clock = Stopwatch.StartNew();
        while (true)
        {
            using var response = await host.Client.GetAsync(path);
            if (response.StatusCode == status)
            {
                return;
            }

            Assert.True(clock.Elapsed < s_limit, $"{path} did not answer {status} within {s_limit}");
            await Task.Delay(10);
        }
    }
}
