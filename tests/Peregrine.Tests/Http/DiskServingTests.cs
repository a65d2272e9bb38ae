using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

/// <summary>Files outside the memory budget are streamed from disk with the same bytes and headers.</summary>
public sealed class DiskServingTests : IAsyncLifetime
{
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;

    public async Task InitializeAsync()
    {
        foreach (var size in Sizes)
        {
            _tree.Write($"file-{size}.bin", Bytes(size));
        }

        _host = await PeregrineHost.StartAsync(_tree.Root, options =>
        {
            options.MaxCachedFileSize = 0;
            options.Headers["X-Content-Type-Options"] = "nosniff";

            // Without a watcher the index keeps the deleted file, which is the case to test.
            options.Watch.Enabled = false;
        });
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    // 0: an empty file has nothing to read and is held in memory even here; the row checks
    // that it is served empty with Content-Length: 0 all the same.
    public static readonly int[] Sizes = [0, 1, 4095, 4097, 65535, 65536, 65537, 2_045_073];

    public static TheoryData<int> SizeData => new(Sizes);

    [Theory]
    [MemberData(nameof(SizeData))]
    public async Task Get_FileServedFromDisk_ReturnsExactBytes(int size)
    {
        using var response = await _host.Client.GetAsync($"/file-{size}.bin");

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(size, response.Content.Headers.ContentLength);
        Assert.Equal(Bytes(size), await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Get_FileDeletedAfterIndexing_PassesOnAsTheNextIndexWill()
    {
        File.Delete(Path.Combine(_tree.Root, "file-65536.bin"));

        using var response = await _host.Client.GetAsync("/file-65536.bin");

        Assert.Equal(HttpStatusCode.NotFound, response.StatusCode);
        Assert.True(response.Headers.Contains(PeregrineHost.NextHeader));
    }

    [Fact]
    public async Task Get_FileReplacedAfterIndexing_ServesTheNewVersionWithItsOwnTag()
    {
        // Replaced by rename, as deploy tools do; the index (no watcher here) still has the old one.
        using var before = await _host.Client.GetAsync("/file-4097.bin");
        var replacement = Bytes(1234);
        var temporary = Path.Combine(_tree.Root, "incoming.tmp");
        await File.WriteAllBytesAsync(temporary, replacement);
        File.Move(temporary, Path.Combine(_tree.Root, "file-4097.bin"), overwrite: true);

        using var after = await _host.Client.GetAsync("/file-4097.bin");

        Assert.Equal(HttpStatusCode.OK, after.StatusCode);
        Assert.Equal(replacement, await after.Content.ReadAsByteArrayAsync());
        Assert.Equal(1234, after.Content.Headers.ContentLength);
        Assert.NotEqual(before.Headers.ETag, after.Headers.ETag);

        // The new version carries the same configured headers as the indexed one did.
        Assert.Equal(["nosniff"], before.Headers.GetValues("X-Content-Type-Options"));
        Assert.Equal(["nosniff"], after.Headers.GetValues("X-Content-Type-Options"));
    }

    private static byte[] Bytes(int size)
    {
        var bytes = new byte[size];
        new Random(size).NextBytes(bytes);
        return bytes;
    }
}
