using System.Collections.Concurrent;
using System.Diagnostics;
using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// Files streamed from disk are served from a private copy of their published version, so a
/// writer that rewrites one in place (truncates it and writes again, as <c>cp</c> does) never
/// destroys what a response is reading: every answer is 200 with one whole version, and the new
/// version follows once its writer has closed it.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class DiskVersionTests
{
    private static readonly TimeSpan s_limit = TimeSpan.FromSeconds(10);

    // Well below the files' lengths, so every response here is read from disk.
    private const int InMemoryLimit = 64 * 1024;

    [Fact]
    public async Task DiskFileRewrittenInPlace_WhileReadersFetch_EveryAnswerIsAWholeVersion_AndTheLastIsServed()
    {
        using var tree = new TempTree();
        byte[][] versions = [Pattern(1024 * 1024 + 123, seed: 1), Pattern(1024 * 1024 - 77, seed: 2)];
        var path = tree.Write("big.bin", versions[0]);
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.MaxCachedFileSize = InMemoryLimit);

        using var stop = new CancellationTokenSource();
        using var answered = new SemaphoreSlim(0);
        var outcomes = new ConcurrentDictionary<string, int>();
        var readers = Enumerable.Range(0, 4).Select(_ => Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                outcomes.AddOrUpdate(await FetchAsync(host, versions), 1, (_, n) => n + 1);
                answered.Release();
            }
        })).ToArray();

        // Each rewrite truncates the file and writes the other version into the same inode; the
        // writer waits for two answers between rewrites, so reads overlap every stage of it.
        const int Rewrites = 60;
        for (var i = 1; i <= Rewrites; i++)
        {
            await File.WriteAllBytesAsync(path, versions[i % 2]);
            Assert.True(await answered.WaitAsync(s_limit) && await answered.WaitAsync(s_limit), "the readers stopped answering");
        }

        var last = versions[Rewrites % 2];
        var clock = Stopwatch.StartNew();
        while (!outcomes.ContainsKey(Label(last, versions)))
        {
            Assert.True(clock.Elapsed < s_limit, $"the last version was not served within {s_limit}: {Describe(outcomes)}");
            await answered.WaitAsync(s_limit);
        }

        await stop.CancelAsync();
        await Task.WhenAll(readers);

        Assert.True(outcomes.Keys.All(outcome => outcome.StartsWith("whole", StringComparison.Ordinal)), Describe(outcomes));
    }

    /// <summary>One GET: "whole vN" for a 200 whose body is version N, else what went wrong.</summary>
    private static async Task<string> FetchAsync(PeregrineHost host, byte[][] versions)
    {
        try
        {
            using var response = await host.Client.GetAsync("/big.bin");
            var body = await response.Content.ReadAsByteArrayAsync();
            if (response.StatusCode != HttpStatusCode.OK)
            {
                return ((int)response.StatusCode).ToString(System.Globalization.CultureInfo.InvariantCulture);
            }

            return body.Length != response.Content.Headers.ContentLength ? "short body" : Label(body, versions);
        }
        catch (HttpRequestException)
        {
            return "cut short";
        }
    }

    private static string Label(byte[] body, byte[][] versions)
    {
        for (var i = 0; i < versions.Length; i++)
        {
            if (body.AsSpan().SequenceEqual(versions[i]))
            {
                return $"whole v{i}";
            }
        }

        return "WRONG bytes";
    }

    private static string Describe(ConcurrentDictionary<string, int> outcomes)
        => string.Join(", ", outcomes.OrderBy(pair => pair.Key, StringComparer.Ordinal).Select(pair => $"{pair.Key}: {pair.Value}"));

    private static byte[] Pattern(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
