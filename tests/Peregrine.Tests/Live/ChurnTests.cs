using System.Collections.Concurrent;
using System.Net;
using System.Security.Cryptography;
using Peregrine.Indexing;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// Files are rewritten in place, truncated, replaced by rename, deleted and recreated in a loop
/// while many clients download them. Every body received must be exactly the content its ETag
/// names (the tag is the content's hash, so the test recomputes it), and its length must match
/// Content-Length. File lengths straddle the in-memory limit, so both ways of sending run: from
/// memory, and from disk, where each version is sent from its own copy. The only other answer
/// allowed is a 404 for a file deliberately deleted: no 503 while a file keeps changing, and no
/// response cut short mid-body, since the previous version is always there to send whole.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class ChurnTests
{
    private const int Files = 24;
    private const int MinimumResponses = 10_000;

    // Lengths run from 200 to 20,200 bytes, so about half of the versions are sent from disk.
    private const int InMemoryLimit = 10_000;

    [Fact]
    public async Task FilesChangingUnderLoad_EveryBodyIsTheVersionItsTagNames()
    {
        using var tree = new TempTree();
        for (var i = 0; i < Files; i++)
        {
            tree.Write(Name(i), Content(i, 0));
        }

        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.MaxCachedFileSize = InMemoryLimit);
        using var stop = new CancellationTokenSource();
        var failures = new ConcurrentQueue<string>();
        var responses = 0;
        var notFound = 0;
        var checkedFromMemory = 0;
        var checkedFromDisk = 0;

        var mutator = Task.Run(async () =>
        {
            var random = new Random(1);
            for (var generation = 1; !stop.IsCancellationRequested; generation++)
            {
                var i = random.Next(Files);
                var path = Path.Combine(tree.Root, Name(i));
                switch (generation % 5)
                {
                    case 0:
                        // In place: truncate, then write, as most editors and cp do.
                        await File.WriteAllBytesAsync(path, Content(i, generation));
                        break;
                    case 1:
                        await using (var truncate = new FileStream(path, FileMode.OpenOrCreate, FileAccess.Write, FileShare.ReadWrite | FileShare.Delete))
                        {
                            truncate.SetLength(random.Next(0, 100));
                        }

                        break;
                    case 2:
                        var temporary = path + ".tmp";
                        await File.WriteAllBytesAsync(temporary, Content(i, generation));
                        File.Move(temporary, path, overwrite: true);
                        break;
                    case 3 when IsDeletable(i):
                        File.Delete(path);
                        break;
                    default:
                        await File.WriteAllBytesAsync(path, Content(i, generation));
                        break;
                }

                await Task.Delay(2);
            }
        });

        var clients = Enumerable.Range(0, 16).Select(client => Task.Run(async () =>
        {
            var random = new Random(client + 100);
            while (Volatile.Read(ref responses) < MinimumResponses)
            {
                var i = random.Next(Files);
                HttpResponseMessage response;
                byte[] body;
                try
                {
                    response = await host.Client.GetAsync("/" + Name(i));
                    body = await response.Content.ReadAsByteArrayAsync();
                }
                catch (HttpRequestException ex)
                {
                    failures.Enqueue($"{Name(i)}: cut short ({ex.Message})");
                    Interlocked.Increment(ref responses);
                    continue;
                }

                using var disposeResponse = response;
                Interlocked.Increment(ref responses);
                if (response.StatusCode == HttpStatusCode.NotFound && IsDeletable(i))
                {
                    Interlocked.Increment(ref notFound);
                    continue;
                }

                if (response.StatusCode != HttpStatusCode.OK)
                {
                    failures.Enqueue($"{Name(i)}: {(int)response.StatusCode}");
                    continue;
                }

                if (body.Length != response.Content.Headers.ContentLength)
                {
                    failures.Enqueue($"{Name(i)}: {body.Length} bytes but Content-Length {response.Content.Headers.ContentLength}");
                }

                var tag = response.Headers.ETag?.Tag;
                if (tag != EntityTag.Compute(body))
                {
                    failures.Enqueue($"{Name(i)}: body hashes to {EntityTag.Compute(body)} but ETag is {tag}");
                    continue;
                }

                // A body over the limit cannot have come from memory; one under it almost always did.
                Interlocked.Increment(ref body.Length > InMemoryLimit ? ref checkedFromDisk : ref checkedFromMemory);
            }
        })).ToArray();

        await Task.WhenAll(clients);
        stop.Cancel();
        await mutator;

        // Most responses must have been checked bytes against ETag, not passed over as a 404; and both ways of sending must have been checked, not just one.
        var checkedCount = checkedFromMemory + checkedFromDisk;
        Assert.True(failures.IsEmpty, $"{failures.Count} of {responses} responses failed, e.g. {string.Join("; ", failures.Take(5))}");
        Assert.True(checkedCount >= MinimumResponses / 2, $"only {checkedCount} of {responses} responses were checked 200s");
        Assert.True(checkedFromDisk >= MinimumResponses / 10, $"only {checkedFromDisk} checked bodies came from disk");
        Assert.True(checkedFromMemory >= MinimumResponses / 10, $"only {checkedFromMemory} checked bodies came from memory");
    }

    private static string Name(int i) => $"dir{i % 3}/file{i}.txt";

    private static bool IsDeletable(int i) => i % 4 == 0;

    private static byte[] Content(int file, int generation)
    {
        // Lengths vary by generation, so a stale Content-Length or a torn body would show.
        var bytes = new byte[200 + ((file * 7919) + (generation * 104729)) % 20_000];
        RandomNumberGenerator.Fill(bytes);
        return bytes;
    }
}
