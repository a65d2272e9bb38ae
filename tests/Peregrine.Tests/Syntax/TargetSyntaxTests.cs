using Peregrine.Syntax;

namespace Peregrine.Tests.Syntax;

public sealed class TargetSyntaxTests
{
    [Theory]
    [InlineData("/", true)]
    [InlineData("/index.html?v=1&x=%20", true)]
    [InlineData("/a%2Fb%c3%a9", true)]
    [InlineData("/caf\u00e9", true)]
    [InlineData("/index.html?q=100%", true)]
    [InlineData("/index.html?a[]=1&b={x}|\"<>", true)]
    [InlineData("/a/b%", false)]
    [InlineData("/a/b%1", false)]
    [InlineData("/a/%zz", false)]
    [InlineData("/a\u0001b", false)]
    [InlineData("/a\tb", false)]
    [InlineData("/a\u007fb", false)]
    [InlineData("/index.html#f", false)]
    [InlineData("/index.html?a#b", false)]
    [InlineData("/index.html?a\u0001", false)]
    public void Target_IsValid_UnlessItHasAControlCharacterAFragmentOrBadPercentEncodingInItsPath(string target, bool valid)
        => Assert.Equal(valid, TargetSyntax.IsValid(target.AsSpan()));

    [Theory]
    [InlineData("http://example.com/a?b", "/a?b")]
    [InlineData("https://[::1]:8080/a", "/a")]
    [InlineData("http://example.com?q", "?q")]
    [InlineData("http://example.com#f", "#f")]
    [InlineData("http://example.com", "")]
    public void AbsoluteForm_PathIsWhatFollowsTheAuthority(string target, string path)
        => Assert.Equal(path, TargetSyntax.PathOfAbsoluteForm(target).ToString());
}
