using System.Net;
using System.Text;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>The notification endpoint on hostile and wrong input; no bucket is read (its endpoint refuses connections).</summary>
public sealed class BucketEventsEndpointTests
{
    private static readonly Uri s_nowhere = new($"http://127.0.0.1:{CephRgw.FreePort()}");

    [Theory]
    [InlineData("{\"Records\":")]
    [InlineData("not json")]
    [InlineData("")]
    [InlineData("[]")]
    [InlineData("{}")]
    [InlineData("{\"Records\":{}}")]
    [InlineData("{\"Records\":[1]}")]
    [InlineData("{\"Records\":[{\"s3\":{\"bucket\":{\"name\":7},\"object\":{\"key\":\"k\"}}}]}")]
    [InlineData("{\"Records\":[{\"s3\":{\"bucket\":{\"name\":\"b\"}}}]}")]
    [InlineData("{\"Records\":[{\"s3\":{\"bucket\":{\"name\":\"b\"},\"object\":{\"key\":\"k\"}}}],")]
    [InlineData("{\"Records\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}")]
    public async Task Events_NotAnEventNotification_400(string body)
    {
        await using var host = await BucketHost.StartAsync(s_nowhere, "s3://bucket-x/p");
        using var response = await host.Client.PostAsync(BucketHost.EventsPath, new StringContent(body, Encoding.UTF8, "application/json"));
        Assert.Equal(HttpStatusCode.BadRequest, response.StatusCode);
    }

    [Fact]
    public async Task Events_OtherMethodsAndSizes_405And413()
    {
        await using var host = await BucketHost.StartAsync(s_nowhere, "s3://bucket-x/p");
        using var get = await host.Client.GetAsync(BucketHost.EventsPath);
        Assert.Equal(HttpStatusCode.MethodNotAllowed, get.StatusCode);
        Assert.Equal("POST", string.Join(",", get.Content.Headers.Allow));

        using var huge = await host.Client.PostAsync(BucketHost.EventsPath, new ByteArrayContent(new byte[(1024 * 1024) + 1]));
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, huge.StatusCode);
    }

    [Fact]
    public async Task Events_AboutTheSite_202_AboutOthers_204()
    {
        await using var host = await BucketHost.StartAsync(s_nowhere, "s3://bucket-x/p");
        using var ours = await host.Client.PostAsync(BucketHost.EventsPath, BucketDeployTests.Event("bucket-x", "p/index.html"));
        Assert.Equal(HttpStatusCode.Accepted, ours.StatusCode);
        using var encoded = await host.Client.PostAsync(BucketHost.EventsPath, BucketDeployTests.Event("bucket-x", "p/a+b%2Fc.html"));
        Assert.Equal(HttpStatusCode.Accepted, encoded.StatusCode);
        using var other = await host.Client.PostAsync(BucketHost.EventsPath, BucketDeployTests.Event("bucket-y", "p/index.html"));
        Assert.Equal(HttpStatusCode.NoContent, other.StatusCode);
        using var outside = await host.Client.PostAsync(BucketHost.EventsPath, BucketDeployTests.Event("bucket-x", "q/index.html"));
        Assert.Equal(HttpStatusCode.NoContent, outside.StatusCode);
    }

    [Fact]
    public async Task Unreachable_BeforeTheFirstCopy_503AndHealthSaysWhy()
    {
        await using var host = await BucketHost.StartAsync(s_nowhere, "s3://bucket-x/p");
        using var file = await host.Client.GetAsync("/index.html");
        Assert.Equal(HttpStatusCode.ServiceUnavailable, file.StatusCode);
        Assert.NotNull(file.Headers.RetryAfter);

        await BucketHost.EventuallyAsync(async () =>
        {
            var (status, bucket) = await host.HealthAsync();
            return status == HttpStatusCode.ServiceUnavailable && bucket.GetProperty("error").ValueKind == System.Text.Json.JsonValueKind.String;
        }, TimeSpan.FromSeconds(30), "/healthz names the error");
        var (_, state) = await host.HealthAsync();
        Assert.False(state.GetProperty("reachable").GetBoolean());
        Assert.Equal("s3://bucket-x/p/", state.GetProperty("source").GetString());
    }
}
