using System.Text;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Safety;

/// <summary>
/// No request may read outside the root or a hidden file, whatever the encoding. Each request
/// line is sent byte for byte over a raw socket; a secret marker sits outside the root, in
/// hidden files, and behind links, and must never come back.
/// </summary>
public sealed class TraversalTests : IAsyncLifetime
{
    private const string Secret = "TOP-SECRET-MARKER";
    private readonly TempTree _outside = new();
    private PeregrineHost _host = null!;

    private string Root => Path.Combine(_outside.Root, "site");

    public async Task InitializeAsync()
    {
        _outside.Write("secret.txt", Secret);
        _outside.Write("secrets/inner.txt", Secret);
        _outside.Write("site/index.html", "home");
        _outside.Write("site/public/page.txt", "public page");
        _outside.Write("site/.env", Secret);
        _outside.Write("site/.git/config", Secret);
        _outside.Write("site/public/.hidden.txt", Secret);
        _outside.Write("site/.well-known/security.txt", "Contact: mailto:security@example.com");
        File.CreateSymbolicLink(Path.Combine(Root, "escape.txt"), Path.Combine(_outside.Root, "secret.txt"));
        File.CreateSymbolicLink(Path.Combine(Root, "escape-relative.txt"), "../secret.txt");
        Directory.CreateSymbolicLink(Path.Combine(Root, "escape-dir"), Path.Combine(_outside.Root, "secrets"));
        File.CreateSymbolicLink(Path.Combine(Root, "inside-link.txt"), Path.Combine(Root, "public/page.txt"));
        Directory.CreateSymbolicLink(Path.Combine(Root, "public/loop"), Root);
        _host = await PeregrineHost.StartAsync(Root);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _outside.Dispose();
    }

    [Theory]
    [InlineData("/../secret.txt")]
    [InlineData("/public/../../secret.txt")]
    [InlineData("/%2e%2e/secret.txt")]
    [InlineData("/%2E%2E/secret.txt")]
    [InlineData("/.%2e/secret.txt")]
    [InlineData("/%2e%2e%2fsecret.txt")]
    [InlineData("/..%2fsecret.txt")]
    [InlineData("/..%2Fsecrets%2Finner.txt")]
    [InlineData("/..%5csecret.txt")]
    [InlineData("/..\\secret.txt")]
    [InlineData("/public\\..\\..\\secret.txt")]
    [InlineData("/%c0%ae%c0%ae/secret.txt")]
    [InlineData("/%c0%af..%c0%afsecret.txt")]
    [InlineData("/%e0%80%ae%e0%80%ae/secret.txt")]
    [InlineData("/%252e%252e/secret.txt")]
    [InlineData("/secret.txt%00")]
    [InlineData("/%00/../secret.txt")]
    [InlineData("/index.html%00.txt")]
    [InlineData("//secret.txt")]
    [InlineData("/./../secret.txt")]
    [InlineData("/escape.txt")]
    [InlineData("/escape-relative.txt")]
    [InlineData("/escape-dir/inner.txt")]
    [InlineData("/public/loop/escape.txt")]
    [InlineData("http://evil/../secret.txt")]
    public async Task Request_TryingToLeaveTheRoot_NeverReturnsOutsideContent(string target)
    {
        var (status, _, body) = await RawHttp.SendAsync(_host.Address, target);

        Assert.DoesNotContain(Secret, Encoding.Latin1.GetString(body));
        Assert.True(status is 400 or 404, $"status {status}");
    }

    [Theory]
    [InlineData("/.env")]
    [InlineData("/.git/config")]
    [InlineData("/%2egit/config")]
    [InlineData("/%2Eenv")]
    [InlineData("/public/.hidden.txt")]
    [InlineData("/public/%2ehidden.txt")]
    [InlineData("/.git/")]
    public async Task Request_ForHiddenFile_IsNotServed(string target)
    {
        var (status, _, body) = await RawHttp.SendAsync(_host.Address, target);

        Assert.DoesNotContain(Secret, Encoding.Latin1.GetString(body));
        Assert.Equal(404, status);
    }

    [Fact]
    public async Task Request_ForWellKnown_IsServed()
    {
        // RFC 8615: .well-known is public by definition, so it is the one dot-folder served.
        var (status, _, body) = await RawHttp.SendAsync(_host.Address, "/.well-known/security.txt");

        Assert.Equal(200, status);
        Assert.StartsWith("Contact:", Encoding.UTF8.GetString(body));
    }

    [Fact]
    public async Task Request_ThroughLinkInsideRoot_IsServed()
    {
        var (status, _, body) = await RawHttp.SendAsync(_host.Address, "/inside-link.txt");

        Assert.Equal(200, status);
        Assert.Equal("public page", Encoding.UTF8.GetString(body));
    }

    [Fact]
    public async Task Request_ThroughLinkLoop_ServesOnlyTheRealFolderOnce()
    {
        // The loop link points back at the root, which is already indexed; it is not walked.
        var (status, _, _) = await RawHttp.SendAsync(_host.Address, "/public/loop/index.html");

        Assert.Equal(404, status);
    }

    [Theory]
    [InlineData("/public/page.txt", "public page")]
    [InlineData("/public/%70age.txt", "public page")]
    [InlineData("/public/./page.txt", "public page")]
    [InlineData("/public/x/../page.txt", "public page")]
    public async Task Request_WithHarmlessEncoding_IsServed(string target, string body)
    {
        var (status, _, content) = await RawHttp.SendAsync(_host.Address, target);

        Assert.Equal(200, status);
        Assert.Equal(body, Encoding.UTF8.GetString(content));
    }
}
