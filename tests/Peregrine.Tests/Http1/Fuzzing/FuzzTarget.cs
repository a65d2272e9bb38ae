using Microsoft.AspNetCore.Server.Kestrel.Core;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// One configuration under test: a server with the fast path and one without, on the same tree,
/// with the same options and the same Kestrel limits. Small limits in some configurations put
/// lengths around each limit within a mutated request's reach.
/// </summary>
internal sealed class FuzzTarget : IAsyncDisposable
{
    private static readonly FuzzSetup[] s_setups =
    [
        new("defaults", 8 * 1024, 32 * 1024, 100, o => o.Headers["X-Content-Type-Options"] = "nosniff"),
        new("small-limits", 200, 400, 6, _ => { }),

        // The standalone server's cleartext reactor reads the connections (a head in pieces, a
        // hand-off mid-connection: the reactor's own decisions), with limits in reach.
        new("reactor", 200, 400, 6, o => o.Headers["X-Content-Type-Options"] = "nosniff", Reactor: true),

        // As the standalone server sets Kestrel: an absolute-form target's authority replaces Host.
        new("options", 1024, 2048, 20, HostOverride: true, Options: o =>
        {
            o.CorsOrigins = ["https://a.example", "https://b.example"];
            o.SpaFallback = "index.html";
            o.CacheRules = [new("*.css", "public, max-age=3600")];
            o.Headers["Cache-Control"] = "public, max-age=60";
        }),
    ];

    private FuzzTarget(FuzzSetup setup, HostPair pair)
    {
        Setup = setup;
        Pair = pair;
    }

    public FuzzSetup Setup { get; }

    public HostPair Pair { get; }

    /// <summary>The files of the tree every target serves, all small enough to be held in memory, one of them 100,000 bytes.</summary>
    public static void WriteTree(TempTree tree)
    {
        tree.Write("index.html", "<!doctype html><title>home</title>" + new string('x', 2000));
        tree.Write("css/site.css", string.Concat(Enumerable.Repeat("body { color: #123456; }\n", 200)));
        tree.Write("img/a.png", Enumerable.Range(0, 3000).Select(i => (byte)(i * 7)).ToArray());

        // Past FileBody.PageCacheMinimum, and still held in memory: sent by sendfile from this
        // process's unnamed copy where the temporary folder is a disk's, whole and in ranges.
        tree.Write("img/b.png", Enumerable.Range(0, 100_000).Select(i => (byte)(i * 13)).ToArray());
        tree.Write("docs/index.html", "docs");
        tree.Write("a.txt", "a");

        // Two builds of one fingerprinted script, both in force: each is kept as a dictionary
        // (RFC 9842), and each gets a dcz delta against the other in the background.
        tree.Write(ScriptPaths[0][1..], Script(0));
        tree.Write(ScriptPaths[1][1..], Script(1));

        // A fixed time, so that a case's bytes (If-Modified-Since) are the same from run to run.
        foreach (var file in Directory.EnumerateFiles(tree.Root, "*", SearchOption.AllDirectories))
        {
            File.SetLastWriteTimeUtc(file, new DateTime(2024, 5, 1, 12, 0, 0, DateTimeKind.Utc));
        }
    }

    /// <summary>The two builds of the fingerprinted script, each a dictionary for the other.</summary>
    public static readonly string[] ScriptPaths = ["/js/app.1a2b3c4d5e6f.js", "/js/app.6f5e4d3c2b1a.js"];

    /// <summary><c>Available-Dictionary</c> values naming each build of the script (RFC 9842 §2.2: a structured-field byte sequence).</summary>
    public static readonly string[] ScriptHashes = [Hash(Script(0)), Hash(Script(1))];

    // About 6 KB of code; the second build changes one line in twenty.
    private static byte[] Script(int build) => System.Text.Encoding.UTF8.GetBytes(string.Concat(
        Enumerable.Range(0, 120).Select(i => $"export const handler{i} = (e) => e.detail.value + {(i % 20 == 3 ? i * 7 + build : i * 7)};\n")));

    private static string Hash(byte[] bytes) => $":{Convert.ToBase64String(System.Security.Cryptography.SHA256.HashData(bytes))}:";

    public static async Task<FuzzTarget[]> StartAllAsync(string root)
    {
        var targets = new FuzzTarget[s_setups.Length];
        for (var i = 0; i < targets.Length; i++)
        {
            targets[i] = await StartAsync(root, s_setups[i]);
        }

        return targets;
    }

    public ValueTask DisposeAsync() => Pair.DisposeAsync();

    private static async Task<FuzzTarget> StartAsync(string root, FuzzSetup setup)
    {
        void Limits(KestrelServerOptions kestrel)
        {
            kestrel.Limits.MaxRequestLineSize = setup.MaxRequestLineSize;
            kestrel.Limits.MaxRequestHeadersTotalSize = setup.MaxRequestHeadersTotalSize;
            kestrel.Limits.MaxRequestHeaderCount = setup.MaxRequestHeaderCount;
            kestrel.AllowHostHeaderOverride = setup.HostOverride;
        }

        return new FuzzTarget(setup, await HostPair.StartAsync(root, setup.Options, "/index.html", Limits, setup.Reactor));
    }
}

/// <param name="Name">Shown with each difference.</param>
/// <param name="MaxRequestLineSize">Kestrel's limit, which the generator aims lengths around.</param>
/// <param name="MaxRequestHeadersTotalSize">Likewise.</param>
/// <param name="MaxRequestHeaderCount">Likewise.</param>
/// <param name="Options">The options both servers get.</param>
/// <param name="HostOverride">Kestrel's AllowHostHeaderOverride, for both.</param>
/// <param name="Reactor">Whether the fast-path server reads its connections with the standalone server's cleartext reactor.</param>
internal sealed record FuzzSetup(string Name, int MaxRequestLineSize, int MaxRequestHeadersTotalSize, int MaxRequestHeaderCount, Action<PeregrineOptions> Options, bool HostOverride = false, bool Reactor = false);
