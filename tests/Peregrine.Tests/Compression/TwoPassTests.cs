using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Headers;
using System.Text.Json;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Live;
using Peregrine.Metrics;
using Peregrine.Tests.Metrics;
using Peregrine.Tests.Infrastructure;
using static Peregrine.Tests.Compression.CompressionHarness;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Compression in two passes, through Kestrel: a requested file is compressed before the files
/// queued ahead of it, every file first gets fast variants and then final ones with new ETags,
/// and /healthz and the instruments say where the work is. The single worker is held at a
/// chosen publication (the compressor's VariantsPublished event runs on the worker thread), so
/// what a request sees meanwhile is certain rather than a matter of timing.
/// </summary>
public sealed class TwoPassTests : IDisposable
{
    private static readonly TimeSpan Bound = TimeSpan.FromSeconds(30);

    private readonly TempTree _tree = new();

    public void Dispose() => _tree.Dispose();

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task RequestedFile_IsCompressedBeforeTheFilesQueuedAheadOfIt(bool fastPath)
    {
        for (var i = 0; i < 12; i++)
        {
            _tree.Write($"page{i:D2}.html", CompressibleText($"page {i}"));
        }

        using var gate = new PublicationGate(final: false);
        await using var host = await StartAsync(gate, fastPath);
        var compressor = host.Services.GetRequiredService<Compressor>();
        var held = await gate.Held.WaitAsync(Bound);

        // The queue's order is the snapshot's; the last file in it has every other file ahead.
        var order = host.Services.GetRequiredService<FileCatalog>().Current!.Files.Select(e => e.RelativePath).ToList();
        var target = order.Last(path => path != held);
        using var before = await GetAsync(host, target, "br, gzip");
        gate.Release();
        await compressor.WhenFirstPassDone().WaitAsync(Bound);

        // The first pass is done once its last file's variants are in force; the worker raises
        // the event for that file just after, outside the compressor's lock.
        await WhenAsync(() => gate.Published.Count(p => !p.Final) >= order.Count);
        using var after = await GetAsync(host, target, "br, gzip");

        Assert.Empty(before.Content.Headers.ContentEncoding);
        Assert.Equal(new[] { held, target }, gate.Published.Where(p => !p.Final).Take(2).Select(p => p.Path));
        Assert.Equal(order.Count, gate.Published.Count(p => !p.Final));
        Assert.Equal("br", after.Content.Headers.ContentEncoding.Single());
    }

    [Fact]
    public async Task File_IsServedFirstWithAFastVariant_ThenWithTheFinalOneUnderANewETag()
    {
        // Two files, and the worker held at the first fast publication: the other file is still
        // queued for the first pass, and the final pass waits while the first pass has work, so
        // the held file's fast variant cannot be replaced before the request for it is answered.
        var sources = new Dictionary<string, byte[]>
        {
            ["/app.js"] = CompressibleText("app"),
            ["/lib.js"] = CompressibleText("lib"),
        };
        foreach (var (path, bytes) in sources)
        {
            _tree.Write(path.TrimStart('/'), bytes);
        }

        using var gate = new PublicationGate(final: false);
        await using var host = await StartAsync(gate);
        var compressor = host.Services.GetRequiredService<Compressor>();
        var held = await gate.Held.WaitAsync(Bound);
        var source = sources[held];

        using var fast = await GetAsync(host, held, "br");
        var fastBody = await fast.Content.ReadAsByteArrayAsync();
        gate.Release();
        await compressor.WhenIdle().WaitAsync(Bound);
        using var final = await GetAsync(host, held, "br");
        var finalBody = await final.Content.ReadAsByteArrayAsync();
        using var revalidated = await GetAsync(host, held, "br", fast.Headers.ETag);

        Assert.Equal("br", fast.Content.Headers.ContentEncoding.Single());
        Assert.Equal("br", final.Content.Headers.ContentEncoding.Single());
        Assert.Equal(source, Decode(ContentCoding.Brotli, fastBody));
        Assert.Equal(source, Decode(ContentCoding.Brotli, finalBody));
        Assert.Equal(BrotliAt(source, Encoders.FastBrotliQuality), fastBody);
        Assert.Equal(BrotliAt(source, Encoders.BrotliQuality), finalBody);
        Assert.NotEqual(fast.Headers.ETag, final.Headers.ETag);

        // A client holding the fast variant gets the final one, not a 304.
        Assert.Equal(HttpStatusCode.OK, revalidated.StatusCode);
        Assert.Equal(final.Headers.ETag, revalidated.Headers.ETag);
        Assert.Equal(sources.Count, compressor.FilesUpgraded);
    }

    [Fact]
    public async Task Healthz_ReportsPendingThenUpgradingThenFinal()
    {
        _tree.Write("a.html", CompressibleText("a"));
        _tree.Write("b.html", CompressibleText("b"));
        _tree.Write("c.html", CompressibleText("c"));
        using var firstPass = new PublicationGate(final: false);
        await using var host = await StartAsync(firstPass, health: true);
        var compressor = host.Services.GetRequiredService<Compressor>();

        await firstPass.Held.WaitAsync(Bound);
        var whileFirstPass = await CompressionHealthAsync(host);
        using var finalPass = new PublicationGate(final: true);
        compressor.VariantsPublished += finalPass.OnPublished;
        firstPass.Release();
        await finalPass.Held.WaitAsync(Bound);
        var whileFinalPass = await CompressionHealthAsync(host);
        finalPass.Release();
        await compressor.WhenIdle().WaitAsync(Bound);
        var afterwards = await CompressionHealthAsync(host);

        // Held after the first publication: two files wait, one is served fast.
        Assert.Equal((2, 1, 0, false), whileFirstPass);

        // Held after the first final publication: one done, two still served fast.
        Assert.Equal((0, 2, 1, false), whileFinalPass);
        Assert.Equal((0, 0, 3, true), afterwards);
    }

    [Fact]
    public async Task FinalInstrument_IsZeroWhileTheFinalPassRuns_AndOneOnceItIsDone()
    {
        _tree.Write("a.html", CompressibleText("a"));
        _tree.Write("b.html", CompressibleText("b"));
        using var gate = new PublicationGate(final: true);
        await using var host = await StartAsync(gate);
        var compressor = host.Services.GetRequiredService<Compressor>();
        var exporter = host.Services.GetRequiredService<PrometheusExporter>();

        await gate.Held.WaitAsync(Bound);
        var during = exporter.Scrape();
        gate.Release();
        await compressor.WhenIdle().WaitAsync(Bound);
        var after = exporter.Scrape();

        // Every file has a variant by now, yet not every one is final.
        Assert.Equal(0, PrometheusText.Sample(during, "peregrine_compression_pending"));
        Assert.Equal(1, PrometheusText.Sample(during, "peregrine_compression_upgrading"));
        Assert.Equal(0, PrometheusText.Sample(during, "peregrine_compression_final"));
        Assert.Equal(0, PrometheusText.Sample(after, "peregrine_compression_upgrading"));
        Assert.Equal(2, PrometheusText.Sample(after, "peregrine_compression_done_total"));
        Assert.Equal(1, PrometheusText.Sample(after, "peregrine_compression_final"));
    }

    private async Task<PeregrineHost> StartAsync(PublicationGate gate, bool fastPath = false, bool health = false)
        => await PeregrineHost.StartAsync(
            _tree.Root,
            options =>
            {
                options.Watch.Enabled = false;
                options.Compression.MaxParallelism = 1;
            },
            app =>
            {
                // Resolved here, before the first index: the gate sees every publication.
                app.Services.GetRequiredService<Compressor>().VariantsPublished += gate.OnPublished;
                if (health)
                {
                    app.UsePeregrineHealth("/healthz");
                }
            },
            fastPath);

    /// <summary>Waits, within <see cref="Bound"/>, until <paramref name="condition"/> holds.</summary>
    private static async Task WhenAsync(Func<bool> condition)
    {
        var deadline = DateTime.UtcNow + Bound;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"not so within {Bound.TotalSeconds} s");
            await Task.Delay(5);
        }
    }

    private static async Task<HttpResponseMessage> GetAsync(PeregrineHost host, string path, string acceptEncoding, EntityTagHeaderValue? ifNoneMatch = null)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        if (ifNoneMatch is not null)
        {
            request.Headers.IfNoneMatch.Add(ifNoneMatch);
        }

        var response = await host.Client.SendAsync(request);
        Assert.Equal(ifNoneMatch is null ? HttpStatusCode.OK : response.StatusCode, response.StatusCode);
        return response;
    }

    private static async Task<(long Pending, long Upgrading, long Done, bool Final)> CompressionHealthAsync(PeregrineHost host)
    {
        using var json = JsonDocument.Parse(await host.Client.GetStringAsync("/healthz"));
        var compression = json.RootElement.GetProperty("compression");
        return (
            compression.GetProperty("pending").GetInt64(),
            compression.GetProperty("upgrading").GetInt64(),
            compression.GetProperty("done").GetInt64(),
            compression.GetProperty("final").GetBoolean());
    }

    private static byte[] BrotliAt(byte[] source, int quality)
    {
        var buffer = new byte[System.IO.Compression.BrotliEncoder.GetMaxCompressedLength(source.Length)];
        Assert.True(System.IO.Compression.BrotliEncoder.TryCompress(source, buffer, out var written, quality, Encoders.BrotliWindow(source.Length)));
        return buffer[..written];
    }

    /// <summary>
    /// Records every publication, and holds the worker thread at the first one of the pass it
    /// watches until released (bounded, so a failed test cannot hang the run).
    /// </summary>
    private sealed class PublicationGate(bool final) : IDisposable
    {
        private readonly TaskCompletionSource<string> _held = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private readonly ManualResetEventSlim _released = new();
        private int _holding;

        public ConcurrentQueue<(string Path, bool Final)> Published { get; } = new();

        /// <summary>Completes with the path of the publication the worker is held at.</summary>
        public Task<string> Held => _held.Task;

        public void OnPublished(CatalogEntry entry, EncodedVariants variants, bool isFinal)
        {
            Published.Enqueue((entry.RelativePath, isFinal));
            if (isFinal == final && Interlocked.Exchange(ref _holding, 1) == 0)
            {
                _held.TrySetResult(entry.RelativePath);
                _released.Wait(Bound);
            }
        }

        public void Release() => _released.Set();

        public void Dispose()
        {
            _released.Set();
            _released.Dispose();
        }
    }
}
