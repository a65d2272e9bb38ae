using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Hosting;

/// <summary>
/// Servers run side by side on one host (the HTTP and HTTPS servers of a site, several sites, a
/// new release started before the old one stops) share its temp folder. Started, killed and
/// restarted among each other, on one root and on two, each live server answers every file whole,
/// large files sent from disk included, and the folders of the killed ones do not outlive them.
/// </summary>
public sealed class SideBySideTests
{
    private const int SIGKILL = 9;

    [Fact]
    public async Task InstancesStartedAndKilledAmongEachOther_EachLiveOne_AnswersEveryFileWhole()
    {
        using var first = Site(seed: 1);
        using var second = Site(seed: 2);
        using var temp = new TempTree();
        var environment = new Dictionary<string, string> { ["TMPDIR"] = temp.Root };
        var live = new List<(ServerProcess Process, Uri Address, TempTree Site)>();
        using var http = new HttpClient { Timeout = TimeSpan.FromSeconds(30) };

        async Task StartAsync(TempTree site)
        {
            var process = ServerProcess.Start(environment, site.Root, "-p", "0");
            live.Add((process, await process.AddressAsync(), site));
        }

        async Task KillAsync(int index)
        {
            var (process, _, _) = live[index];
            live.RemoveAt(index);
            process.Signal(SIGKILL);
            await process.WaitForExitAsync(TimeSpan.FromSeconds(10));
            process.Dispose();
        }

        async Task EveryFileWholeOnEveryLiveInstanceAsync(string after)
        {
            foreach (var (process, address, site) in live)
            {
                foreach (var name in Names)
                {
                    var expected = File.ReadAllBytes(Path.Combine(site.Root, name));
                    using var response = await http.GetAsync(new Uri(address, name));
                    var body = await response.Content.ReadAsByteArrayAsync();
                    Assert.True(
                        response.StatusCode == HttpStatusCode.OK && body.AsSpan().SequenceEqual(expected),
                        $"after {after}: server {process.Id} answered /{name} with {(int)response.StatusCode} and {body.Length} of {expected.Length} bytes{(body.AsSpan().SequenceEqual(expected) ? "" : ", not the file's")}\n{process.Output}\n{process.Errors}");
                }
            }

            // Each server sends its large file from a copy in a folder of its own; a killed one's is
            // removed by the next server that makes its folder.
            Assert.Equal(live.Count, Directory.GetDirectories(temp.Root, "peregrine-copies-*").Length);
        }

        try
        {
            await StartAsync(first);
            await EveryFileWholeOnEveryLiveInstanceAsync("the first start");
            await StartAsync(first);
            await EveryFileWholeOnEveryLiveInstanceAsync("a second server on the same root");
            await StartAsync(second);
            await EveryFileWholeOnEveryLiveInstanceAsync("a third server on another root");
            await KillAsync(0);
            await StartAsync(second);
            await EveryFileWholeOnEveryLiveInstanceAsync("the first killed and a fourth started");
            await KillAsync(1);
            await KillAsync(1);
            await StartAsync(first);
            await StartAsync(first);
            await EveryFileWholeOnEveryLiveInstanceAsync("two more killed and two started");
        }
        finally
        {
            foreach (var (process, _, _) in live)
            {
                process.Dispose();
            }
        }
    }

    private static readonly string[] Names = ["big.bin", "mid.bin", "index.html"];

    /// <summary>A root with a file streamed from disk (over the 1 MiB held in memory), one held in memory and a page.</summary>
    private static TempTree Site(int seed)
    {
        var site = new TempTree();
        var random = new Random(seed);
        var big = new byte[3_000_000];
        random.NextBytes(big);
        var mid = new byte[300_000];
        random.NextBytes(mid);
        site.Write("big.bin", big);
        site.Write("mid.bin", mid);
        site.Write("index.html", $"<!doctype html><title>site {seed}</title>");
        return site;
    }
}
