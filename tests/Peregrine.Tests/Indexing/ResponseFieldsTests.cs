using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Primitives;
using Peregrine.Http1;
using Peregrine.Fields;
using Peregrine.Indexing;
using Peregrine.Negotiation;

namespace Peregrine.Tests.Indexing;

/// <summary>
/// The one description of a file response: which fields it carries, one of each name, and that
/// the middleware's writer and the fast path's blocks carry the same ones.
/// </summary>
public sealed class ResponseFieldsTests
{
    private static CatalogEntry Entry(bool negotiable = true, string cacheControl = "no-cache")
        => CatalogEntry.ForFile("app.js", "/srv", 0, "/srv/app.js", new Representation(ContentCoding.Identity, 5, "\"abc\"", "hello"u8.ToArray(), null),
            "text/javascript; charset=utf-8", 0, "Sat, 01 Jan 2000 00:00:00 GMT", cacheControl, negotiable);

    private static ConfiguredHeaders Configured(Action<PeregrineOptions> configure)
    {
        var options = new PeregrineOptions { Root = "/srv" };
        configure(options);
        return new ConfiguredHeaders(options);
    }

    private static string[] Names((string Name, StringValues Value)[] fields) => [.. fields.Select(f => f.Name.ToLowerInvariant())];

    [Fact]
    public void Create_NothingConfigured_CarriesVaryValidatorsAndCacheControl()
    {
        var entry = Entry();
        var response = ResponseFields.Create(entry, entry.Identity, Configured(_ => { }));
        Assert.Equal(["vary", "etag", "last-modified", "cache-control"], Names(response.Entity));
        Assert.Equal(["content-type", "accept-ranges"], Names(response.Content));
        Assert.Equal("Accept-Encoding", response.Entity[0].Value.ToString());
    }

    [Fact]
    public void Create_NotNegotiableWithoutCors_HasNoVary()
    {
        var entry = Entry(negotiable: false);
        var response = ResponseFields.Create(entry, entry.Identity, Configured(_ => { }));
        Assert.DoesNotContain("vary", Names(response.Entity));
    }

    [Fact]
    public void Create_ConfiguredCacheControl_ReplacesTheRuleOnce()
    {
        var entry = Entry();
        var response = ResponseFields.Create(entry, entry.Identity, Configured(o => o.Headers["cache-control"] = "public, max-age=60"));
        var cacheControl = Assert.Single(response.Entity, f => string.Equals(f.Name, "Cache-Control", StringComparison.OrdinalIgnoreCase));
        Assert.Equal("public, max-age=60", cacheControl.Value.ToString());
        Assert.True(response.CacheControlConfigured);
    }

    [Fact]
    public void Create_AnyOriginCorsAndConfiguredAllowOrigin_SendsTheConfiguredOneOnly()
    {
        var entry = Entry();
        var response = ResponseFields.Create(entry, entry.Identity, Configured(o =>
        {
            o.CorsOrigins.Add("*");
            o.Headers["Access-Control-Allow-Origin"] = "https://example.com";
        }));
        var allow = Assert.Single(response.Entity, f => string.Equals(f.Name, "Access-Control-Allow-Origin", StringComparison.OrdinalIgnoreCase));
        Assert.Equal("https://example.com", allow.Value.ToString());
        Assert.Single(response.Entity, f => f.Name == "Access-Control-Expose-Headers");
    }

    [Theory]
    [InlineData(false, "no-cache")]
    [InlineData(true, "private")]
    public void WriteEntity_RequestCacheControl_YieldsOnlyToAConfiguredOne(bool configured, string expected)
    {
        var entry = Entry(cacheControl: "public, max-age=600");
        var response = ResponseFields.Create(entry, entry.Identity, Configured(o =>
        {
            if (configured)
            {
                o.Headers["Cache-Control"] = "private";
            }
        }));
        IHeaderDictionary headers = new HeaderDictionary();
        response.WriteEntity(new DefaultHttpContext().Request, headers, "no-cache");
        Assert.Equal(expected, headers.CacheControl.ToString());
    }

    [Fact]
    public void ResponseBlocks_CarryEveryFieldOfTheDescriptionOnce()
    {
        var entry = Entry();
        var response = ResponseFields.Create(entry, entry.Identity, Configured(o =>
        {
            o.CorsOrigins.Add("*");
            o.Headers["Access-Control-Allow-Origin"] = "https://example.com";
            o.Headers["X-Frame-Options"] = "DENY";
        }));
        var blocks = ResponseBlocks.Create(response, entry.Identity.Length, serverHeader: true);
        var ok = System.Text.Encoding.ASCII.GetString(blocks.Ok).Split("\r\n", StringSplitOptions.RemoveEmptyEntries);
        var notModified = System.Text.Encoding.ASCII.GetString(blocks.NotModified).Split("\r\n", StringSplitOptions.RemoveEmptyEntries);

        IHeaderDictionary headers = new HeaderDictionary();
        response.WriteEntity(new DefaultHttpContext().Request, headers);
        response.WriteContent(headers);
        headers.ContentLength = entry.Identity.Length;
        headers.Server = "Kestrel";
        string[] expected = [.. headers.SelectMany(h => h.Value.Select(v => $"{h.Key}: {v}")).Order(StringComparer.OrdinalIgnoreCase)];
        Assert.Equal("HTTP/1.1 200 OK", ok[0]);
        Assert.Equal(expected, ok[1..].Order(StringComparer.OrdinalIgnoreCase), StringComparer.OrdinalIgnoreCase);

        IHeaderDictionary entityOnly = new HeaderDictionary();
        response.WriteEntity(new DefaultHttpContext().Request, entityOnly);
        entityOnly.Server = "Kestrel";
        string[] expected304 = [.. entityOnly.SelectMany(h => h.Value.Select(v => $"{h.Key}: {v}")).Order(StringComparer.OrdinalIgnoreCase)];
        Assert.Equal("HTTP/1.1 304 Not Modified", notModified[0]);
        Assert.Equal(expected304, notModified[1..].Order(StringComparer.OrdinalIgnoreCase), StringComparer.OrdinalIgnoreCase);
    }

    [Fact]
    public void ResponseBlocks_ConfiguredServer_ReplacesKestrels()
    {
        var entry = Entry();
        var response = ResponseFields.Create(entry, entry.Identity, Configured(o => o.Headers["Server"] = "peregrine"));
        var ok = System.Text.Encoding.ASCII.GetString(ResponseBlocks.Create(response, 5, serverHeader: true).Ok);
        Assert.DoesNotContain("Server: Kestrel", ok, StringComparison.Ordinal);
        Assert.Contains("Server: peregrine", ok, StringComparison.Ordinal);
    }

    [Fact]
    public void ForErrorPage_CarriesNoValidatorsNorRanges_AndConfiguredHeadersWinOverNoCache()
    {
        var fields = ResponseFields.ForErrorPage("text/html", "br", "Accept-Encoding", Configured(o =>
        {
            o.Headers["Cache-Control"] = "no-store";
            o.Headers["X-Frame-Options"] = "DENY";
        }));

        Assert.Equal(["vary", "cache-control", "x-frame-options"], Names(fields.Entity));
        Assert.Equal("no-store", fields.Entity[1].Value.ToString());
        Assert.Equal(["content-type", "content-encoding"], Names(fields.Content));
    }

    [Fact]
    public void WithValidators_ReplacesETagAndLastModified_KeepsTheRest()
    {
        var entry = Entry();
        var indexed = ResponseFields.Create(entry, entry.Identity, Configured(o => o.Headers["X-Frame-Options"] = "DENY"));

        var fresh = indexed.WithValidators("\"new\"", "Tue, 24 Nov 2026 10:00:00 GMT");

        Assert.Equal(Names(indexed.Entity), Names(fresh.Entity));
        Assert.Equal("\"new\"", fresh.Entity.Single(f => f.Name == "ETag").Value.ToString());
        Assert.Equal("Tue, 24 Nov 2026 10:00:00 GMT", fresh.Entity.Single(f => f.Name == "Last-Modified").Value.ToString());
        Assert.Same(indexed.Content, fresh.Content);
        Assert.Equal("\"abc\"", indexed.Entity.Single(f => f.Name == "ETag").Value.ToString());
    }

    [Theory]
    [InlineData("https://a.example", "https://a.example")]
    [InlineData("https://b.example", null)]
    [InlineData(null, null)]
    public void WriteEntity_OriginList_EchoesAnAllowedOriginOnly(string? origin, string? expected)
    {
        var entry = Entry();
        var fields = ResponseFields.Create(entry, entry.Identity, Configured(o => o.CorsOrigins.Add("https://a.example")));
        var request = new DefaultHttpContext().Request;
        if (origin is not null)
        {
            request.Headers.Origin = origin;
        }

        IHeaderDictionary headers = new HeaderDictionary();
        fields.WriteEntity(request, headers);

        Assert.Equal(expected, headers.AccessControlAllowOrigin.Count == 0 ? null : headers.AccessControlAllowOrigin.ToString());
        Assert.Equal("Accept-Encoding, Origin", headers.Vary.ToString());
    }
}
