using Microsoft.AspNetCore.Http;
using Peregrine.Cors;

namespace Peregrine.Tests.Cors;

/// <summary>The CORS policy on its own: which origins may read, and what a preflight is answered.</summary>
public sealed class CorsPolicyTests
{
    private static HttpContext Request(string method, params string[] origins)
    {
        var context = new DefaultHttpContext();
        context.Request.Method = method;
        if (origins.Length != 0)
        {
            context.Request.Headers.Origin = origins;
        }

        return context;
    }

    [Fact]
    public void Create_NoOrigins_IsDisabledAndAnswersNoPreflight()
    {
        var policy = CorsPolicy.Create([]);
        var context = Request("OPTIONS", "https://a.example");
        context.Request.Headers.AccessControlRequestMethod = "GET";

        Assert.False(policy.Enabled);
        Assert.False(policy.IsPreflight(context.Request));
        Assert.Empty(policy.HeadersForEveryRequest);
    }

    [Fact]
    public void Create_AnyOrigin_SendsItsHeadersOnEveryResponseAndDoesNotVary()
    {
        var policy = CorsPolicy.Create(["*"]);

        Assert.True(policy.Enabled);
        Assert.False(policy.VariesByOrigin);
        Assert.Equal(
            ["Access-Control-Allow-Origin: *", "Access-Control-Expose-Headers: ETag, Content-Range, Accept-Ranges"],
            policy.HeadersForEveryRequest.Select(h => $"{h.Name}: {h.Value}"));
    }

    [Theory]
    [InlineData("https://a.example", "https://a.example")]
    [InlineData("https://b.example", "https://b.example")]
    [InlineData("https://c.example", "")]
    [InlineData("https://A.example", "")]
    [InlineData("null", "")]
    public void AddResponseHeaders_ListedOrigin_IsEchoedAndOthersGetNothing(string origin, string expected)
    {
        var policy = CorsPolicy.Create(["https://a.example", "https://b.example"]);
        var context = Request("GET", origin);

        policy.AddResponseHeaders(context.Request, context.Response.Headers);

        Assert.True(policy.VariesByOrigin);
        Assert.Equal(expected, context.Response.Headers.AccessControlAllowOrigin.ToString());
        Assert.Equal(expected.Length != 0, context.Response.Headers.AccessControlExposeHeaders.Count != 0);
    }

    [Fact]
    public void AddResponseHeaders_TwoOriginFields_AllowNeither()
    {
        var policy = CorsPolicy.Create(["https://a.example"]);
        var context = Request("GET", "https://a.example", "https://a.example");

        policy.AddResponseHeaders(context.Request, context.Response.Headers);

        Assert.Equal(0, context.Response.Headers.AccessControlAllowOrigin.Count);
    }

    [Theory]
    [InlineData("OPTIONS", true, true)]
    [InlineData("OPTIONS", false, false)]
    [InlineData("GET", true, false)]
    public void IsPreflight_NeedsOptionsOriginAndRequestMethod(string method, bool requestMethod, bool expected)
    {
        var policy = CorsPolicy.Create(["*"]);
        var context = Request(method, "https://a.example");
        if (requestMethod)
        {
            context.Request.Headers.AccessControlRequestMethod = "GET";
        }

        Assert.Equal(expected, policy.IsPreflight(context.Request));
    }

    [Fact]
    public void AnswerPreflight_AllowedOrigin_Gets204WithMethodsMaxAgeAndTheHeadersAskedFor()
    {
        var policy = CorsPolicy.Create(["https://a.example"]);
        var context = Request("OPTIONS", "https://a.example");
        context.Request.Headers.AccessControlRequestMethod = "GET";
        context.Request.Headers.AccessControlRequestHeaders = "range, if-none-match";

        policy.AnswerPreflight(context.Request, context.Response);

        var headers = context.Response.Headers;
        Assert.Equal(StatusCodes.Status204NoContent, context.Response.StatusCode);
        Assert.Equal("Origin", headers.Vary.ToString());
        Assert.Equal("https://a.example", headers.AccessControlAllowOrigin.ToString());
        Assert.Equal("GET, HEAD", headers.AccessControlAllowMethods.ToString());
        Assert.Equal("86400", headers.AccessControlMaxAge.ToString());
        Assert.Equal("range, if-none-match", headers.AccessControlAllowHeaders.ToString());
    }

    [Fact]
    public void AnswerPreflight_OriginNotAllowed_Gets204WithoutPermission()
    {
        var policy = CorsPolicy.Create(["https://a.example"]);
        var context = Request("OPTIONS", "https://evil.example");
        context.Request.Headers.AccessControlRequestMethod = "GET";

        policy.AnswerPreflight(context.Request, context.Response);

        Assert.Equal(StatusCodes.Status204NoContent, context.Response.StatusCode);
        Assert.Equal(0, context.Response.Headers.AccessControlAllowOrigin.Count);
        Assert.Equal(0, context.Response.Headers.AccessControlAllowMethods.Count);
    }
}
