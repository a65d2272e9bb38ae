using System.Net;
using System.Net.Sockets;
using System.Text.Json;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// A bucket root whose private folder cannot be made (the cache folder's parent is a file, as an
/// unwritable or full temporary folder would be): the host starts and stays up, answers 503,
/// says why in /healthz, and tries again as it does for an unreachable store. Needs no store:
/// the endpoint is a loopback port nothing listens on.
/// </summary>
public sealed class BucketFolderFaultTests
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task FolderThatCannotBeMade_StartsAnd503s_SaysWhy_ThenTriesAgain()
    {
        using var tree = new TempTree();
        var blocker = tree.Write("not-a-folder", "a file where the cache folder's parent should be");
        var cache = Path.Combine(blocker, "copies");
        await using var host = await BucketHost.StartAsync(ClosedEndpoint(), "s3://site/www", b => b.CacheDirectory = cache);

        await BucketHost.EventuallyAsync(async () => (await host.HealthAsync()).Bucket.GetProperty("error").ValueKind == JsonValueKind.String, s_bound, "the failure in /healthz");
        var (status, state) = await host.HealthAsync();
        Assert.Equal(HttpStatusCode.ServiceUnavailable, status);
        Assert.Contains("not-a-folder", state.GetProperty("error").GetString(), StringComparison.Ordinal);
        Assert.Equal("<503>", await host.TextAsync("/index.html"));

        // Still up a backoff later, and trying again: once the folder can be made, the error is
        // the store's, which nothing answers.
        File.Delete(blocker);
        await BucketHost.EventuallyAsync(async () => (await host.HealthAsync()).Bucket.GetProperty("error").GetString() is { } error && !error.Contains("not-a-folder", StringComparison.Ordinal), s_bound, "a sync tried again with the folder made");
        Assert.True(Directory.Exists(cache), "the folder was not made on the next try");
        Assert.Equal("<503>", await host.TextAsync("/index.html"));
    }

    [Fact]
    public async Task FolderOfAStoppedHost_IsGone()
    {
        using var tree = new TempTree();
        var cache = Path.Combine(tree.Root, "copies");
        await using (var host = await BucketHost.StartAsync(ClosedEndpoint(), "s3://site/www", b => b.CacheDirectory = cache))
        {
            await BucketHost.EventuallyAsync(() => Task.FromResult(Directory.Exists(cache) && Directory.GetDirectories(cache).Length == 1), s_bound, "the host's folder made");
        }

        Assert.Empty(Directory.GetFileSystemEntries(cache));
    }

    // A loopback port that was free a moment ago: connections to it are refused.
    private static Uri ClosedEndpoint()
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return new Uri($"http://127.0.0.1:{((IPEndPoint)socket.LocalEndPoint!).Port}/");
    }
}
