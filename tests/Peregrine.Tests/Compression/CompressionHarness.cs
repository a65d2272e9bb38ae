using System.Collections.Concurrent;
using System.Text;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;
using Peregrine.Compression;
using Peregrine.Indexing;
using Peregrine.Negotiation;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Compression;

/// <summary>
/// A temporary site indexed by the real catalog builder, and compressors run over it to
/// completion. Files are small so that Brotli at quality 11 stays quick.
/// </summary>
internal sealed class CompressionHarness : IDisposable
{
    public CompressionHarness()
    {
        Options = new PeregrineOptions { Root = Tree.Root };
        Options.Compression.MaxParallelism = 2;
    }

    public TempTree Tree { get; } = new();

    public PeregrineOptions Options { get; }

    /// <summary>A folder beside the site for cache tests, deleted with it.</summary>
    public string CacheDirectory => Tree.Root + "-cache";

    public CapturingLogger Logger { get; } = new();

    /// <summary>About 9 KB of text that every coding shrinks to a few hundred bytes.</summary>
    public static byte[] CompressibleText(string salt = "")
    {
        var text = new StringBuilder();
        for (var i = 0; i < 150; i++)
        {
            text.Append(salt).Append("<li class=\"item\">The quick brown fox jumps over the lazy dog, line ").Append(i).Append("</li>\n");
        }

        return Encoding.UTF8.GetBytes(text.ToString());
    }

    public static byte[] RandomBytes(int length)
    {
        var bytes = new byte[length];
        new Random(42).NextBytes(bytes);
        return bytes;
    }

    public CatalogSnapshot Index() => new CatalogBuilder(Options, new MemoryBudget(Options.MemoryBudget), NullLogger.Instance).Build();

    /// <summary>Indexes the site again as a rebuild does: unchanged files keep their entries from <paramref name="previous"/>.</summary>
    public CatalogSnapshot Rebuild(CatalogSnapshot previous) => new CatalogBuilder(Options, new MemoryBudget(Options.MemoryBudget), NullLogger.Instance).Build(previous);

    /// <summary>The bytes of the variants held in memory for the entry: what it charges to the budget.</summary>
    public static long HeldBytes(CatalogEntry entry)
        => entry.Encoded is { } variants ? new[] { variants.Brotli, variants.Zstd, variants.Gzip }.Sum(variant => variant?.Content?.Length ?? 0) : 0;

    public CatalogEntry Find(CatalogSnapshot snapshot, string path)
    {
        Assert.True(snapshot.TryFind(path, out var entry), $"{path} is not indexed.");
        return entry;
    }

    /// <summary>Queues every negotiable entry of the snapshot and waits until all are published.</summary>
    public async Task<Compressor> CompressAll(CatalogSnapshot snapshot, MemoryBudget? budget = null)
    {
        var compressor = new Compressor(Options.Compression, budget ?? new MemoryBudget(long.MaxValue), Logger);
        compressor.Enqueue(snapshot.Entries.Where(entry => entry.Negotiable).Distinct());
        await compressor.WhenIdle().WaitAsync(TimeSpan.FromSeconds(30));
        return compressor;
    }

    /// <summary>Indexes the site, compresses it, and returns the one entry asked for.</summary>
    public async Task<CatalogEntry> IndexAndCompress(string path, MemoryBudget? budget = null)
    {
        var snapshot = Index();
        using var compressor = await CompressAll(snapshot, budget);
        return Find(snapshot, path);
    }

    public static ContentCoding Coding(string token)
    {
        Assert.True(Encoders.TryParse(token, out var coding));
        return coding;
    }

    /// <summary>The bytes a representation sends, from memory or from its file.</summary>
    public static byte[] BytesOf(Representation representation) =>
        representation.Content ?? File.ReadAllBytes(representation.PhysicalPath!);

    public static byte[] Decode(ContentCoding coding, byte[] encoded)
    {
        using var input = new MemoryStream(encoded);
        using var decoder = Encoders.OpenDecoder(coding, input);
        using var output = new MemoryStream();
        decoder.CopyTo(output);
        return output.ToArray();
    }

    /// <summary>Encodes at a low level, so the result differs from what the compressor would make.</summary>
    public static byte[] EncodeQuickly(ContentCoding coding, byte[] source)
    {
        switch (coding)
        {
            case ContentCoding.Brotli:
                var buffer = new byte[System.IO.Compression.BrotliEncoder.GetMaxCompressedLength(source.Length)];
                Assert.True(System.IO.Compression.BrotliEncoder.TryCompress(source, buffer, out var written, quality: 1, window: 22));
                return buffer[..written];
            case ContentCoding.Zstd:
                return Zstd.Compress(source, level: 1);
            default:
                using (var output = new MemoryStream())
                {
                    using (var gzip = new System.IO.Compression.GZipStream(output, System.IO.Compression.CompressionLevel.Fastest, leaveOpen: true))
                    {
                        gzip.Write(source);
                    }

                    return output.ToArray();
                }
        }
    }

    public void Dispose()
    {
        Tree.Dispose();
        try
        {
            Directory.Delete(CacheDirectory, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}

/// <summary>Keeps every log event, to check what is reported and how often.</summary>
internal sealed class CapturingLogger : ILogger
{
    public ConcurrentQueue<(LogLevel Level, int EventId, string Message)> Events { get; } = new();

    public int Count(int eventId) => Events.Count(e => e.EventId == eventId);

    public IDisposable? BeginScope<TState>(TState state)
        where TState : notnull => null;

    public bool IsEnabled(LogLevel logLevel) => true;

    public void Log<TState>(LogLevel logLevel, EventId eventId, TState state, Exception? exception, Func<TState, Exception?, string> formatter)
    {
        Events.Enqueue((logLevel, eventId.Id, formatter(state, exception)));
    }
}
