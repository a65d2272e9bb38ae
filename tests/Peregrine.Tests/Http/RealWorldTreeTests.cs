using System.Net;
using System.Net.Http.Headers;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

/// <summary>
/// Every file of a real tree comes back byte-exact with its headers. The tree is the one named
/// named by PEREGRINE_REALWORLD_TREE (folders separated by ':'; .ci/run unpacks npm packages such
/// as bootstrap and @mdi/svg there), or else the sample site.
/// </summary>
public sealed class RealWorldTreeTests
{
    public static TheoryData<string> Trees()
    {
        var named = Environment.GetEnvironmentVariable("PEREGRINE_REALWORLD_TREE");
        return new TheoryData<string>(string.IsNullOrEmpty(named)
            ? [Path.Combine(RepositoryRoot.Path, "samples", "site")]
            : named.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries));
    }

    [Theory]
    [MemberData(nameof(Trees))]
    public async Task EveryFile_ComesBackByteExactWithHeadersAndRevalidates(string root)
    {
        Assert.True(Directory.Exists(root), $"PEREGRINE_REALWORLD_TREE: '{root}' does not exist");
        await using var host = await PeregrineHost.StartAsync(root);

        var files = Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories)
            .Select(path => Path.GetRelativePath(root, path).Replace('\\', '/'))
            .Where(relative => !relative.Split('/').Any(segment => segment.StartsWith('.')))
            .ToList();
        Assert.NotEmpty(files);

        foreach (var relative in files)
        {
            var url = "/" + string.Join('/', relative.Split('/').Select(Uri.EscapeDataString));
            var expected = await File.ReadAllBytesAsync(Path.Combine(root, relative));

            using var response = await host.Client.GetAsync(url);
            Assert.True(response.StatusCode == HttpStatusCode.OK, $"{url}: {response.StatusCode}");
            Assert.Equal(expected, await response.Content.ReadAsByteArrayAsync());
            Assert.Equal(expected.Length, response.Content.Headers.ContentLength);
            Assert.False(string.IsNullOrEmpty(response.Content.Headers.ContentType?.MediaType), url);
            Assert.NotNull(response.Content.Headers.LastModified);
            var etag = response.Headers.ETag;
            Assert.NotNull(etag);

            using var revalidate = new HttpRequestMessage(HttpMethod.Get, url);
            revalidate.Headers.IfNoneMatch.Add(new EntityTagHeaderValue(etag!.Tag));
            using var notModified = await host.Client.SendAsync(revalidate);
            Assert.True(notModified.StatusCode == HttpStatusCode.NotModified, $"{url}: {notModified.StatusCode}");
        }
    }
}
