using System.Text;
using Microsoft.AspNetCore.WebUtilities;
using Peregrine.Ranges;

namespace Peregrine.Tests.Ranges;

public sealed class MultipartByteRangesTests
{
    private const int CompleteLength = 10_000;

    [Theory]
    [InlineData("text/plain; charset=utf-8", "0-99,5000-5499,9990-9999")]
    [InlineData("application/octet-stream", "9990-9999,0-0")]
    [InlineData("", "0-0,2-2,4-4,6-6")]
    [InlineData("image/png", "0-9999,0-0")]
    public async Task Body_ReadBackByAMultipartReader_HasEachRangesBytesAndContentRange(string partContentType, string spelled)
    {
        var content = Content();
        var ranges = Parse(spelled);
        var boundary = MultipartByteRanges.NewBoundary();

        var body = Build(content, ranges, partContentType, boundary);

        // RFC 9110 §14.6: the body must be exactly as long as announced, so Content-Length holds.
        Assert.Equal(MultipartByteRanges.ComputeLength(ranges, CompleteLength, partContentType, boundary), body.Length);

        var reader = new MultipartReader(boundary, new MemoryStream(body));
        foreach (var range in ranges)
        {
            var section = await reader.ReadNextSectionAsync();
            Assert.NotNull(section);
            Assert.Equal($"bytes {range.Start}-{range.Last}/{CompleteLength}", section.Headers!["Content-Range"].ToString());
            if (partContentType.Length > 0)
            {
                Assert.Equal(partContentType, section.ContentType);
            }
            else
            {
                Assert.False(section.Headers.ContainsKey("Content-Type"));
            }

            var part = new MemoryStream();
            await section.Body.CopyToAsync(part);
            Assert.Equal(content.AsSpan((int)range.Start, (int)range.Length).ToArray(), part.ToArray());
        }

        Assert.Null(await reader.ReadNextSectionAsync());
    }

    [Theory]
    // RFC 9110 §14.6 with RFC 2046 §5.1.1 framing: the CRLF before a delimiter belongs to it.
    [InlineData(true, "text/plain", "--b0\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-99/10000\r\n\r\n")]
    [InlineData(false, "text/plain", "\r\n--b0\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-99/10000\r\n\r\n")]
    [InlineData(true, "", "--b0\r\nContent-Range: bytes 0-99/10000\r\n\r\n")]
    public void WritePartHeader_FirstOrLaterPart_WritesExactlyTheFraming(bool first, string partContentType, string expected)
    {
        var destination = new byte[MultipartByteRanges.MaxPartHeaderLength(partContentType, "b0")];

        var written = MultipartByteRanges.WritePartHeader(destination, first, new ByteRange(0, 100), CompleteLength, partContentType, "b0");

        Assert.Equal(expected, Encoding.ASCII.GetString(destination, 0, written));
    }

    [Fact]
    public void WriteClosing_Boundary_WritesTheCloseDelimiter()
    {
        var destination = new byte[16];

        var written = MultipartByteRanges.WriteClosing(destination, "b0");

        Assert.Equal("\r\n--b0--\r\n", Encoding.ASCII.GetString(destination, 0, written));
    }

    [Fact]
    public void MaxPartHeaderLength_LargestPositions_IsExactlyEnough()
    {
        var boundary = MultipartByteRanges.NewBoundary();
        var max = MultipartByteRanges.MaxPartHeaderLength("video/mp4", boundary);
        var destination = new byte[max];

        var written = MultipartByteRanges.WritePartHeader(
            destination, first: false, new ByteRange(long.MaxValue - 1, 1), long.MaxValue, "video/mp4", boundary);

        Assert.Equal(max, written);
    }

    [Fact]
    public void WritePartHeader_DestinationTooSmall_Throws()
    {
        Assert.Throws<ArgumentException>(
            () => MultipartByteRanges.WritePartHeader(new byte[10], first: true, new ByteRange(0, 1), 1, "text/plain", "b0"));
    }

    [Theory]
    [InlineData("text/plain\r\nX-Injected: 1")]
    [InlineData("text/plain\u00e9")]
    public void WritePartHeader_ContentTypeOutsideVisibleAscii_Throws(string partContentType)
    {
        Assert.Throws<ArgumentException>(
            () => MultipartByteRanges.WritePartHeader(new byte[256], first: true, new ByteRange(0, 1), 1, partContentType, "b0"));
    }

    [Fact]
    public void NewBoundary_TwoCalls_GiveDifferentTokensOfAtLeastTwentyCharacters()
    {
        var one = MultipartByteRanges.NewBoundary();
        var two = MultipartByteRanges.NewBoundary();

        Assert.NotEqual(one, two);
        Assert.All([one, two], boundary =>
        {
            Assert.InRange(boundary.Length, 20, 70);
            Assert.True(boundary.All(char.IsAsciiLetterOrDigit), boundary);
        });
    }

    [Fact]
    public void ContentType_Boundary_NamesMultipartByteranges()
    {
        Assert.Equal("multipart/byteranges; boundary=Ab3_-.", MultipartByteRanges.ContentType("Ab3_-."));
    }

    [Theory]
    [InlineData("")]
    [InlineData("has space")]
    [InlineData("semi;colon")]
    [InlineData("a\r\nb")]
    public void ContentType_BoundaryThatIsNotAToken_Throws(string boundary)
    {
        Assert.Throws<ArgumentException>(() => MultipartByteRanges.ContentType(boundary));
    }

    [Fact]
    public void ContentType_BoundaryOverSeventyCharacters_Throws()
    {
        // RFC 2046 §5.1.1: a boundary is at most 70 characters.
        Assert.Throws<ArgumentException>(() => MultipartByteRanges.ContentType(new string('a', 71)));
    }

    private static byte[] Content()
    {
        var content = new byte[CompleteLength];
        for (var i = 0; i < content.Length; i++)
        {
            content[i] = (byte)((i * 31) % 251);
        }

        return content;
    }

    private static ByteRange[] Parse(string spelled) =>
        spelled.Split(',')
            .Select(pair => pair.Split('-'))
            .Select(pair => new ByteRange(long.Parse(pair[0]), long.Parse(pair[1]) - long.Parse(pair[0]) + 1))
            .ToArray();

    private static byte[] Build(byte[] content, ByteRange[] ranges, string partContentType, string boundary)
    {
        var body = new MemoryStream();
        var header = new byte[MultipartByteRanges.MaxPartHeaderLength(partContentType, boundary)];
        for (var i = 0; i < ranges.Length; i++)
        {
            var written = MultipartByteRanges.WritePartHeader(header, i == 0, ranges[i], CompleteLength, partContentType, boundary);
            body.Write(header, 0, written);
            body.Write(content, (int)ranges[i].Start, (int)ranges[i].Length);
        }

        var closing = new byte[boundary.Length + 8];
        body.Write(closing, 0, MultipartByteRanges.WriteClosing(closing, boundary));
        return body.ToArray();
    }
}
