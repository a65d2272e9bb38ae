using System.IO.Compression;
using System.Net;
using Microsoft.Extensions.DependencyInjection;
using Peregrine.Compression;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Compression;

/// <summary>
/// Every compressible file of a real tree, asked for with each encoding, comes back as a body
/// that decodes to the file's exact bytes, with its own strong ETag and Vary on every answer.
/// The tree is the one RealWorldTreeTests uses (PEREGRINE_REALWORLD_TREE, else the sample site).
/// </summary>
public sealed class NegotiationEndToEndTests
{
    public static TheoryData<string> Trees() => Http.RealWorldTreeTests.Trees();

    [Theory]
    [MemberData(nameof(Trees))]
    public async Task EveryCompressibleFile_DecodesToItsExactBytesInEachEncoding(string root)
    {
        await using var host = await PeregrineHost.StartAsync(root);
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        await host.Services.GetRequiredService<Compressor>().WhenIdle();

        var negotiable = catalog.Current!.Entries.Where(e => e.IsFile && e.Negotiable).Distinct().ToList();
        Assert.NotEmpty(negotiable);
        var encoded = 0;
        foreach (var entry in negotiable)
        {
            var url = "/" + string.Join('/', entry.RelativePath[1..].Split('/').Select(Uri.EscapeDataString));
            var expected = await File.ReadAllBytesAsync(entry.PhysicalPath);
            foreach (var token in new[] { "br", "gzip", "zstd" })
            {
                using var request = new HttpRequestMessage(HttpMethod.Get, url);
                request.Headers.TryAddWithoutValidation("Accept-Encoding", token);
                using var response = await host.Client.SendAsync(request);
                var body = await response.Content.ReadAsByteArrayAsync();

                Assert.Equal(HttpStatusCode.OK, response.StatusCode);
                Assert.Contains("Accept-Encoding", response.Headers.Vary);
                Assert.Equal(body.Length, response.Content.Headers.ContentLength);
                var coding = response.Content.Headers.ContentEncoding.SingleOrDefault();
                if (coding is null)
                {
                    // Not worth keeping for this file (too small or incompressible): identity.
                    Assert.Equal(expected, body);
                    Assert.Equal(entry.Identity.ETag.ToString(), response.Headers.ETag!.Tag);
                    continue;
                }

                encoded++;
                Assert.Equal(token, coding);
                Assert.NotEqual(entry.Identity.ETag.ToString(), response.Headers.ETag!.Tag);
                Assert.True(expected.AsSpan().SequenceEqual(Decode(token, body)), $"{url} as {token}");
            }
        }

        Assert.True(encoded > 0, "no file was served encoded");
    }

    [Fact]
    public async Task NotModified_ForAnEncodedRepresentation_ComparesItsOwnTagAndVaries()
    {
        using var tree = new TempTree();
        tree.Write("app.js", string.Concat(Enumerable.Repeat("function hello() { return 'world'; }\n", 200)));
        await using var host = await PeregrineHost.StartAsync(tree.Root);
        await host.Services.GetRequiredService<Compressor>().WhenIdle();

        using var first = await SendAsync(host, "br", null);
        var brTag = first.Headers.ETag!.Tag;
        using var same = await SendAsync(host, "br", brTag);
        using var other = await SendAsync(host, "gzip", brTag);
        using var head = await host.Client.SendAsync(new HttpRequestMessage(HttpMethod.Head, "/app.js"));

        Assert.Equal("br", first.Content.Headers.ContentEncoding.Single());
        Assert.Equal(HttpStatusCode.NotModified, same.StatusCode);
        Assert.Contains("Accept-Encoding", same.Headers.Vary);
        Assert.Equal(HttpStatusCode.OK, other.StatusCode);
        Assert.Equal("gzip", other.Content.Headers.ContentEncoding.Single());
        Assert.Contains("Accept-Encoding", head.Headers.Vary);
    }

    [Theory]
    // RFC 9110 §12.5.3: with nothing acceptable, identity is sent rather than a 406.
    [InlineData("identity;q=0")]
    [InlineData("*;q=0")]
    [InlineData("deflate")]
    public async Task NothingAcceptable_GetsIdentityNot406(string acceptEncoding)
    {
        using var tree = new TempTree();
        tree.Write("app.js", string.Concat(Enumerable.Repeat("function hello() { return 'world'; }\n", 200)));
        await using var host = await PeregrineHost.StartAsync(tree.Root);
        await host.Services.GetRequiredService<Compressor>().WhenIdle();

        using var response = await SendAsync(host, acceptEncoding, null);

        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Empty(response.Content.Headers.ContentEncoding);
    }

    private static async Task<HttpResponseMessage> SendAsync(PeregrineHost host, string acceptEncoding, string? ifNoneMatch)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, "/app.js");
        request.Headers.TryAddWithoutValidation("Accept-Encoding", acceptEncoding);
        if (ifNoneMatch is not null)
        {
            request.Headers.TryAddWithoutValidation("If-None-Match", ifNoneMatch);
        }

        return await host.Client.SendAsync(request);
    }

    private static byte[] Decode(string token, byte[] body)
    {
        using var input = new MemoryStream(body);
        using Stream decoder = token switch
        {
            // The framework's decoders, independent of the encoders under test; zstd has none
            // in .NET 10, so Peregrine's own streaming decoder reads it.
            "br" => new BrotliStream(input, CompressionMode.Decompress),
            "gzip" => new GZipStream(input, CompressionMode.Decompress),
            _ => Zstd.OpenDecoder(input, leaveOpen: false),
        };
        using var output = new MemoryStream();
        decoder.CopyTo(output);
        return output.ToArray();
    }
}
