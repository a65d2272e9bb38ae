using System.Net;
using Microsoft.AspNetCore.WebUtilities;
using Microsoft.Net.Http.Headers;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

/// <summary>RFC 9110 §14: ranges over files held in memory and files streamed from disk alike.</summary>
public sealed class RangeRequestTests : IAsyncLifetime
{
    private const int Size = 10_000;
    private static readonly byte[] s_content = MakeContent();
    private readonly TempTree _tree = new();
    private PeregrineHost _memory = null!;
    private PeregrineHost _disk = null!;
    private string _etag = "";
    private DateTimeOffset _lastModified;

    public async Task InitializeAsync()
    {
        _tree.Write("file.bin", s_content);
        _memory = await PeregrineHost.StartAsync(_tree.Root);
        _disk = await PeregrineHost.StartAsync(_tree.Root, options => options.MaxCachedFileSize = 0);
        using var response = await _memory.Client.GetAsync("/file.bin");
        _etag = response.Headers.ETag!.Tag;
        _lastModified = response.Content.Headers.LastModified!.Value;
    }

    public async Task DisposeAsync()
    {
        await _memory.DisposeAsync();
        await _disk.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    // §14.1.2 single ranges: first-last, open-ended, suffix, clamped last byte.
    [InlineData(false, "bytes=0-99", 0, 99)]
    [InlineData(false, "bytes=100-", 100, Size - 1)]
    [InlineData(false, "bytes=-500", Size - 500, Size - 1)]
    [InlineData(false, "bytes=9990-20000", 9990, Size - 1)]
    [InlineData(false, "bytes=0-0", 0, 0)]
    [InlineData(true, "bytes=0-99", 0, 99)]
    [InlineData(true, "bytes=100-", 100, Size - 1)]
    [InlineData(true, "bytes=-500", Size - 500, Size - 1)]
    [InlineData(true, "bytes=5000-5000", 5000, 5000)]
    public async Task Get_SingleRange_Returns206WithThoseBytes(bool fromDisk, string range, long first, long last)
    {
        using var response = await SendAsync(fromDisk, ("Range", range));

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Equal($"bytes {first}-{last}/{Size}", response.Content.Headers.ContentRange!.ToString());
        Assert.Equal(last - first + 1, response.Content.Headers.ContentLength);
        Assert.Equal(s_content[(int)first..(int)(last + 1)], await response.Content.ReadAsByteArrayAsync());
        Assert.Equal(_etag, response.Headers.ETag!.Tag);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Get_SeveralRanges_ReturnsMultipartByteranges(bool fromDisk)
    {
        // §14.6: each part carries its Content-Range and the representation's Content-Type.
        using var response = await SendAsync(fromDisk, ("Range", "bytes=0-9, 5000-5099, -10"));

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        var contentType = MediaTypeHeaderValue.Parse(response.Content.Headers.ContentType!.ToString());
        Assert.Equal("multipart/byteranges", contentType.MediaType.Value);
        var body = await response.Content.ReadAsByteArrayAsync();
        Assert.Equal(body.Length, response.Content.Headers.ContentLength);

        var reader = new MultipartReader(HeaderUtilities.RemoveQuotes(contentType.Boundary).Value!, new MemoryStream(body));
        var expected = new[] { (0, 9), (5000, 5099), (Size - 10, Size - 1) };
        foreach (var (first, last) in expected)
        {
            var section = await reader.ReadNextSectionAsync();
            Assert.NotNull(section);
            Assert.Equal($"bytes {first}-{last}/{Size}", section!.Headers!["Content-Range"].ToString());
            Assert.Equal("application/octet-stream", section.ContentType);
            using var part = new MemoryStream();
            await section.Body.CopyToAsync(part);
            Assert.Equal(s_content[first..(last + 1)], part.ToArray());
        }

        Assert.Null(await reader.ReadNextSectionAsync());
    }

    [Theory]
    [InlineData("bytes=10000-")]
    [InlineData("bytes=20000-30000")]
    [InlineData("bytes=-0")]
    public async Task Get_UnsatisfiableRange_Returns416WithCompleteLength(string range)
    {
        // §15.5.17.
        using var response = await SendAsync(false, ("Range", range));

        Assert.Equal(HttpStatusCode.RequestedRangeNotSatisfiable, response.StatusCode);
        Assert.Equal($"bytes */{Size}", response.Content.Headers.ContentRange!.ToString());
    }

    [Theory]
    [InlineData("bytes=abc")]
    [InlineData("items=0-10")]
    [InlineData("bytes=50-10")]
    [InlineData("bytes=0-0,200-200,400-400,600-600,800-800,1000-1000,1200-1200,1400-1400,1600-1600,1800-1800,2000-2000,2200-2200,2400-2400,2600-2600,2800-2800,3000-3000,3200-3200")]
    public async Task Get_InvalidOrAbusiveRange_IsIgnoredWithA200(string range)
    {
        using var response = await SendAsync(false, ("Range", range));

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(s_content, await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Get_ManyAdjacentRanges_AreCoalescedIntoOne()
    {
        // §14.3 lets a server coalesce; 52 two-byte ranges side by side become bytes 0-103.
        var range = "bytes=" + string.Join(",", Enumerable.Range(0, 52).Select(i => $"{2 * i}-{2 * i + 1}"));
        using var response = await SendAsync(false, ("Range", range));

        Assert.Equal(HttpStatusCode.PartialContent, response.StatusCode);
        Assert.Equal($"bytes 0-103/{Size}", response.Content.Headers.ContentRange!.ToString());
    }

    [Theory]
    // §13.1.5: a matching If-Range lets the Range apply; anything else gets the whole file.
    [InlineData("{etag}", 206)]
    [InlineData("\"other\"", 200)]
    [InlineData("W/{etag}", 200)]
    [InlineData("{lm}", 206)]
    [InlineData("{before}", 200)]
    [InlineData("garbage", 200)]
    public async Task Get_RangeWithIfRange_HonoursRangeOnlyWhenItMatches(string ifRange, int expected)
    {
        using var response = await SendAsync(false, ("Range", "bytes=0-9"), ("If-Range", ifRange));

        Assert.Equal(expected, (int)response.StatusCode);
    }

    [Fact]
    public async Task Head_WithRange_IgnoresIt()
    {
        // §14.2: GET is the only method that defines range handling.
        using var request = new HttpRequestMessage(HttpMethod.Head, "/file.bin");
        request.Headers.TryAddWithoutValidation("Range", "bytes=0-9");
        using var response = await _memory.Client.SendAsync(request);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal(Size, response.Content.Headers.ContentLength);
    }

    [Fact]
    public async Task Get_Full_AdvertisesByteRanges()
    {
        using var response = await SendAsync(false);

        Assert.Equal("bytes", response.Headers.AcceptRanges.Single());
    }

    [Fact]
    public async Task Get_RangeWithMatchingIfNoneMatch_Returns304First()
    {
        // §13.2.2: preconditions are evaluated before Range.
        using var response = await SendAsync(false, ("Range", "bytes=0-9"), ("If-None-Match", "{etag}"));

        Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
    }

    private async Task<HttpResponseMessage> SendAsync(bool fromDisk, params (string Name, string Value)[] headers)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, "/file.bin");
        foreach (var (name, value) in headers)
        {
            request.Headers.TryAddWithoutValidation(name, value
                .Replace("{etag}", _etag)
                .Replace("{lm}", _lastModified.ToString("r"))
                .Replace("{before}", _lastModified.AddHours(-1).ToString("r")));
        }

        return await (fromDisk ? _disk : _memory).Client.SendAsync(request);
    }

    private static byte[] MakeContent()
    {
        var bytes = new byte[Size];
        new Random(42).NextBytes(bytes);
        return bytes;
    }
}
