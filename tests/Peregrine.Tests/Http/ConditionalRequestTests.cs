using System.Net;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Http;

/// <summary>RFC 9110 §13: preconditions on GET and HEAD, evaluated in the order of §13.2.2.</summary>
public sealed class ConditionalRequestTests : IAsyncLifetime
{
    // Placeholders in the table: {etag} is the file's ETag, {weak} is W/{etag}, {lm} its
    // Last-Modified, {before} and {after} one hour either side of it.
    private readonly TempTree _tree = new();
    private PeregrineHost _host = null!;
    private string _etag = "";
    private DateTimeOffset _lastModified;

    public async Task InitializeAsync()
    {
        var path = _tree.Write("file.txt", "content");
        File.SetLastWriteTimeUtc(path, new DateTime(2024, 5, 1, 12, 0, 0, DateTimeKind.Utc));
        _host = await PeregrineHost.StartAsync(_tree.Root);
        using var response = await _host.Client.GetAsync("/file.txt");
        _etag = response.Headers.ETag!.Tag;
        _lastModified = response.Content.Headers.LastModified!.Value;
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _tree.Dispose();
    }

    [Theory]
    // §13.1.2 If-None-Match: weak comparison, lists and "*".
    [InlineData("If-None-Match", "{etag}", 304)]
    [InlineData("If-None-Match", "{weak}", 304)]
    [InlineData("If-None-Match", "\"other\", {etag}", 304)]
    [InlineData("If-None-Match", "\"other\",{weak} ,\"x\"", 304)]
    [InlineData("If-None-Match", "*", 304)]
    [InlineData("If-None-Match", "\"other\"", 200)]
    [InlineData("If-None-Match", "\"a,b\", \"c\"", 200)]
    [InlineData("If-None-Match", "garbage", 200)]
    [InlineData("If-None-Match", "", 200)]
    // §13.1.1 If-Match: strong comparison; a weak tag never matches.
    [InlineData("If-Match", "{etag}", 200)]
    [InlineData("If-Match", "\"other\", {etag}", 200)]
    [InlineData("If-Match", "*", 200)]
    [InlineData("If-Match", "{weak}", 412)]
    [InlineData("If-Match", "\"other\"", 412)]
    [InlineData("If-Match", "garbage", 412)]
    // §13.1.3 If-Modified-Since: 304 when not modified since; invalid dates are ignored.
    [InlineData("If-Modified-Since", "{lm}", 304)]
    [InlineData("If-Modified-Since", "{after}", 304)]
    [InlineData("If-Modified-Since", "{before}", 200)]
    [InlineData("If-Modified-Since", "Wednesday, 01-May-24 12:00:00 GMT", 304)]
    [InlineData("If-Modified-Since", "Wed May  1 12:00:00 2024", 304)]
    [InlineData("If-Modified-Since", "not a date", 200)]
    // §13.1.4 If-Unmodified-Since: 412 when modified since; invalid dates are ignored.
    [InlineData("If-Unmodified-Since", "{lm}", 200)]
    [InlineData("If-Unmodified-Since", "{after}", 200)]
    [InlineData("If-Unmodified-Since", "{before}", 412)]
    [InlineData("If-Unmodified-Since", "not a date", 200)]
    public async Task Get_WithOnePrecondition_AnswersPerRfc9110(string header, string value, int expected)
    {
        using var response = await SendAsync(HttpMethod.Get, (header, value));

        Assert.Equal(expected, (int)response.StatusCode);
    }

    [Theory]
    // §13.2.2 step 1 before step 3: a failing If-Match wins over a matching If-None-Match.
    [InlineData("If-Match", "\"other\"", "If-None-Match", "{etag}", 412)]
    // Step 2 is skipped when If-Match is present.
    [InlineData("If-Match", "{etag}", "If-Unmodified-Since", "{before}", 200)]
    // Step 4 is skipped when If-None-Match is present: the ETag decides.
    [InlineData("If-None-Match", "\"other\"", "If-Modified-Since", "{after}", 200)]
    [InlineData("If-None-Match", "{etag}", "If-Modified-Since", "{before}", 304)]
    // Step 2 before step 4.
    [InlineData("If-Unmodified-Since", "{before}", "If-Modified-Since", "{after}", 412)]
    public async Task Get_WithTwoPreconditions_EvaluatesInRfc9110Order(string header1, string value1, string header2, string value2, int expected)
    {
        using var response = await SendAsync(HttpMethod.Get, (header1, value1), (header2, value2));

        Assert.Equal(expected, (int)response.StatusCode);
    }

    [Fact]
    public async Task NotModified_CarriesValidatorsAndCachingButNoBody()
    {
        // RFC 9110 §15.4.5.
        using var response = await SendAsync(HttpMethod.Get, ("If-None-Match", "{etag}"));

        Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
        Assert.Equal(_etag, response.Headers.ETag!.Tag);
        Assert.Equal(_lastModified, response.Content.Headers.LastModified);
        Assert.Equal("no-cache", response.Headers.CacheControl!.ToString());
        Assert.Empty(await response.Content.ReadAsByteArrayAsync());
    }

    [Fact]
    public async Task Head_WithMatchingIfNoneMatch_Returns304()
    {
        using var response = await SendAsync(HttpMethod.Head, ("If-None-Match", "{etag}"));

        Assert.Equal(HttpStatusCode.NotModified, response.StatusCode);
    }

    private async Task<HttpResponseMessage> SendAsync(HttpMethod method, params (string Name, string Value)[] headers)
    {
        var request = new HttpRequestMessage(method, "/file.txt");
        foreach (var (name, value) in headers)
        {
            request.Headers.TryAddWithoutValidation(name, Expand(value));
        }

        return await _host.Client.SendAsync(request);
    }

    private string Expand(string value) => value
        .Replace("{etag}", _etag)
        .Replace("{weak}", "W/" + _etag)
        .Replace("{lm}", _lastModified.ToString("r"))
        .Replace("{before}", _lastModified.AddHours(-1).ToString("r"))
        .Replace("{after}", _lastModified.AddHours(1).ToString("r"));
}
