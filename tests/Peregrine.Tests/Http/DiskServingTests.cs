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

        _host = await PeregrineHost.StartAsync(_tree.Root, options => options.MaxCachedFileSize = 0);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

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
    public async Task Get_FileDeletedAfterIndexing_Answers503NotWrongBytes()
    {
        File.Delete(Path.Combine(_tree.Root, "file-65536.bin"));

        using var response = await _host.Client.GetAsync("/file-65536.bin");

        Assert.Equal(HttpStatusCode.ServiceUnavailable, response.StatusCode);
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    private static byte[] Bytes(int size)
    {
        var bytes = new byte[size];
        new Random(size).NextBytes(bytes);
        return bytes;
    }
}
