using Peregrine.Indexing;

namespace Peregrine.Tests.Indexing;

/// <summary>The Use-As-Dictionary match pattern of a fingerprinted asset (RFC 9842 §2.1.1).</summary>
public sealed class DictionaryMatchTests
{
    [Theory]
    [InlineData("", "/assets/app-BkQ3x9Zt.js", "/assets/app-*.js")]
    [InlineData("", "/assets/app.3f9a1c2b.js", "/assets/app.*.js")]
    [InlineData("", "/app.3f9a1c2b.css", "/app.*.css")]
    [InlineData("", "/js/bootstrap.bundle.min.3f9a1c2b.js", "/js/bootstrap.bundle.min.*.js")]
    [InlineData("/static", "/assets/vendor-3f9a1c2b.js", "/static/assets/vendor-*.js")]
    [InlineData("", "/assets/chunk-a_b-BkQ3x9Zt.mjs", "/assets/chunk-a_b-*.mjs")]
    public void FingerprintedPath_MatchesEveryFingerprintOfTheSameStemAndExtension(string requestPath, string relativePath, string pattern)
    {
        Assert.Equal(pattern, DictionaryMatch.For(requestPath, relativePath));
        Assert.Equal("match=\"" + pattern + "\"", DictionaryMatch.FieldValue(pattern));
    }

    [Theory]
    [InlineData("", "/assets/app.js")]
    [InlineData("", "/assets/report-20240101.js")]
    [InlineData("", "/assets/my app-BkQ3x9Zt.js")]
    [InlineData("", "/assets/app+x-BkQ3x9Zt.js")]
    [InlineData("", "/assets/a:b-BkQ3x9Zt.js")]
    [InlineData("", "/assets/(x)-BkQ3x9Zt.js")]
    [InlineData("", "/assets/é-BkQ3x9Zt.js")]
    [InlineData("/a b", "/app-BkQ3x9Zt.js")]
    public void OtherPaths_HaveNoPattern(string requestPath, string relativePath)
    {
        Assert.Null(DictionaryMatch.For(requestPath, relativePath));
    }
}
