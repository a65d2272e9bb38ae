using System.Diagnostics;
using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>Changes on disk reach clients within a second, with no restart.</summary>
[Collection(LiveCollection.Name)]
public sealed class LiveContentTests : IAsyncLifetime
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(1);
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        _tree.Write("index.html", "home");
        _tree.Write("changing.txt", "version 1");
        _tree.Write("doomed.txt", "here for now");
        _tree.Write("big.bin", new byte[3 * 1024 * 1024]);
        _host = await PeregrineHost.StartAsync(_tree.Root);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Fact]
    public async Task NewFile_IsServedWithinOneSecond()
    {
        _tree.Write("docs/new.txt", "fresh");

        var elapsed = await TimeUntilAsync(async () =>
        {
            using var response = await _host.Client.GetAsync("/docs/new.txt");
            return response.StatusCode == HttpStatusCode.OK && await response.Content.ReadAsStringAsync() == "fresh";
        });

        Assert.True(elapsed < s_limit, $"took {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task ChangedFile_IsServedWithItsNewContentAndTagWithinOneSecond()
    {
        using var before = await _host.Client.GetAsync("/changing.txt");
        _tree.Write("changing.txt", "version 2, longer");

        var elapsed = await TimeUntilAsync(async () =>
        {
            using var response = await _host.Client.GetAsync("/changing.txt");
            return await response.Content.ReadAsStringAsync() == "version 2, longer"
                && !Equals(response.Headers.ETag, before.Headers.ETag);
        });

        Assert.True(elapsed < s_limit, $"took {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task DeletedFile_Answers404WithinOneSecond()
    {
        File.Delete(Path.Combine(_tree.Root, "doomed.txt"));

        var elapsed = await TimeUntilAsync(async () =>
        {
            using var response = await _host.Client.GetAsync("/doomed.txt");
            return response.StatusCode == HttpStatusCode.NotFound;
        });

        Assert.True(elapsed < s_limit, $"took {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task NewFolderWithIndex_IsServedAndRedirectedWithinOneSecond()
    {
        _tree.Write("section/index.html", "section");

        var elapsed = await TimeUntilAsync(async () =>
        {
            using var response = await _host.Client.GetAsync("/section");
            return response.StatusCode == HttpStatusCode.MovedPermanently;
        });

        Assert.True(elapsed < s_limit, $"took {elapsed.TotalMilliseconds} ms");
    }

    [Fact]
    public async Task LargeFileRewrittenInPlace_IsNeverSentWithStaleHeaders()
    {
        // The 3 MiB file is streamed from disk; after an in-place rewrite to another length
        // every response either matches its own headers or is cut short, never wrong bytes.
        var replacement = new byte[2 * 1024 * 1024];
        new Random(7).NextBytes(replacement);
        await File.WriteAllBytesAsync(Path.Combine(_tree.Root, "big.bin"), replacement);

        var elapsed = await TimeUntilAsync(async () =>
        {
            using var response = await _host.Client.GetAsync("/big.bin");
            var body = await response.Content.ReadAsByteArrayAsync();
            Assert.Equal(response.Content.Headers.ContentLength, body.Length);
            return body.AsSpan().SequenceEqual(replacement);
        });

        Assert.True(elapsed < s_limit, $"took {elapsed.TotalMilliseconds} ms");
    }

    private static async Task<TimeSpan> TimeUntilAsync(Func<Task<bool>> condition)
    {
        var stopwatch = Stopwatch.StartNew();
        while (stopwatch.Elapsed < TimeSpan.FromSeconds(10))
        {
            if (await condition())
            {
                return stopwatch.Elapsed;
            }

            await Task.Delay(10);
        }

        return stopwatch.Elapsed;
    }
}
