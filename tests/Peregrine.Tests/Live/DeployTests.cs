using System.Collections.Concurrent;
using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Live;

/// <summary>
/// A deploy switches the whole site at once: every response under load comes wholly from the
/// old release or wholly from the new one, page and assets alike.
/// </summary>
[Collection(LiveCollection.Name)]
public sealed class DeployTests
{
    private static readonly string[] s_files = ["index.html", "app.js", "css/site.css", "data/info.json"];

    [Fact]
    public async Task SymlinkSwap_UnderLoad_ServesOneReleaseOrTheOtherNeverAMix()
    {
        using var tree = new TempTree();
        WriteRelease(tree, "releases/42", "42");
        WriteRelease(tree, "releases/43", "43");
        var current = Path.Combine(tree.Root, "current");
        Directory.CreateSymbolicLink(current, Path.Combine(tree.Root, "releases/42"));
        await using var host = await PeregrineHost.StartAsync(current);

        var seen = await LoadWhileAsync(host, async () =>
        {
            await Task.Delay(300);

            // Re-point atomically: a new link renamed over the old one (rename(2) through
            // `mv -T`, as deploy tools do; .NET's File.Move follows the link to a folder).
            var next = Path.Combine(tree.Root, "current.next");
            Directory.CreateSymbolicLink(next, Path.Combine(tree.Root, "releases/43"));
            using var mv = System.Diagnostics.Process.Start("mv", ["-T", next, current]);
            await mv.WaitForExitAsync();
            Assert.Equal(0, mv.ExitCode);
        });

        Assert.Contains("42", seen);
        Assert.Contains("43", seen);
    }

    [Fact]
    public async Task FolderRename_UnderLoad_ServesOneReleaseOrTheOtherNeverAMix()
    {
        using var tree = new TempTree();
        WriteRelease(tree, "site", "1");
        WriteRelease(tree, "site.new", "2");
        var site = Path.Combine(tree.Root, "site");
        await using var host = await PeregrineHost.StartAsync(site);

        var seen = await LoadWhileAsync(host, async () =>
        {
            await Task.Delay(300);
            Directory.Move(site, Path.Combine(tree.Root, "site.old"));
            Directory.Move(Path.Combine(tree.Root, "site.new"), site);
        });

        Assert.Contains("1", seen);
        Assert.Contains("2", seen);
    }

    private static void WriteRelease(TempTree tree, string folder, string release)
    {
        foreach (var file in s_files)
        {
            tree.Write($"{folder}/{file}", Body(release, file));
        }
    }

    /// <summary>Different lengths per release, so a mix of headers and bytes would show.</summary>
    private static string Body(string release, string file)
        => $"release {release} {file} " + new string('x', int.Parse(release) % 7 * 100);

    /// <summary>
    /// Loads the site from 8 clients while <paramref name="deploy"/> runs and for 1.5 s after.
    /// Every response must be a 200 whose Content-Length and body are exactly one release's file.
    /// Returns the releases seen.
    /// </summary>
    private static async Task<HashSet<string>> LoadWhileAsync(PeregrineHost host, Func<Task> deploy)
    {
        var seen = new ConcurrentDictionary<string, bool>();
        var failures = new ConcurrentQueue<string>();
        using var stop = new CancellationTokenSource();
        var clients = Enumerable.Range(0, 8).Select(_ => Task.Run(async () =>
        {
            while (!stop.IsCancellationRequested)
            {
                foreach (var file in s_files)
                {
                    using var response = await host.Client.GetAsync("/" + file);
                    var body = await response.Content.ReadAsStringAsync();
                    if (response.StatusCode != HttpStatusCode.OK || body.Length != response.Content.Headers.ContentLength)
                    {
                        failures.Enqueue($"{file}: {(int)response.StatusCode} length {body.Length}");
                        continue;
                    }

                    var release = body.Split(' ')[1];
                    if (!int.TryParse(release, out _) || body != Body(release, file))
                    {
                        failures.Enqueue($"{file}: mixed body '{body}'");
                    }

                    seen[release] = true;
                }
            }
        })).ToArray();

        await deploy();
        await Task.Delay(1500);
        stop.Cancel();
        await Task.WhenAll(clients);

        Assert.Empty(failures);
        return seen.Keys.ToHashSet();
    }
}
