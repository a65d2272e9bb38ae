using System.Runtime.InteropServices;
using Peregrine.Sources;
using static Peregrine.Interop.Libc;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Platform;

/// <summary>
/// The portable parts resolve links with .NET's calls (<see cref="FileSystemProbe.ResolveLinks"/>)
/// and must answer as realpath(3) does, a link in the middle of a target included: that is
/// what keeps a link from escaping the root where there is no realpath.
/// </summary>
public sealed class LinkResolutionTests : IAsyncLifetime
{
    private const string Secret = "TOP-SECRET-MARKER";
    private readonly TempTree _outside = new();
    private PeregrineHost _host = null!;

    private string Root => Path.Combine(_outside.Root, "site");

    public async Task InitializeAsync()
    {
        _outside.Write("secret.txt", Secret);
        _outside.Write("other/deep/page.txt", "deep");
        _outside.Write("other/top.txt", "top");
        _outside.Write("site/index.html", "home");
        _outside.Write("site/public/page.txt", "public page");

        // "up" leaves the root and is refused as a link; "through.txt" leaves it only through "up".
        Directory.CreateSymbolicLink(Path.Combine(Root, "up"), "..");
        File.CreateSymbolicLink(Path.Combine(Root, "through.txt"), "up/secret.txt");
        File.CreateSymbolicLink(Path.Combine(Root, "inside.txt"), "public/../public/page.txt");
        Directory.CreateSymbolicLink(Path.Combine(_outside.Root, "deep-link"), Path.Combine(_outside.Root, "other/deep"));
        File.CreateSymbolicLink(Path.Combine(_outside.Root, "dangling.txt"), "nowhere.txt");
        File.CreateSymbolicLink(Path.Combine(_outside.Root, "loop-a"), "loop-b");
        File.CreateSymbolicLink(Path.Combine(_outside.Root, "loop-b"), "loop-a");
        _host = await PeregrineHost.StartAsync(Root);
    }

    public async Task DisposeAsync()
    {
        await _host.DisposeAsync();
        _outside.Dispose();
    }

    [Theory]
    [InlineData("secret.txt", "secret.txt")]
    [InlineData("site/through.txt", "secret.txt")]
    [InlineData("site/up/site/through.txt", "secret.txt")]
    [InlineData("site/inside.txt", "site/public/page.txt")]
    [InlineData("deep-link/page.txt", "other/deep/page.txt")]
    [InlineData("deep-link/../top.txt", "other/top.txt")]
    [InlineData("site/./public//page.txt", "site/public/page.txt")]
    [InlineData("dangling.txt", null)]
    [InlineData("loop-a", null)]
    [InlineData("missing/page.txt", null)]
    [InlineData("secret.txt/inner", null)]
    public void ResolveLinks_Path_IsWhatRealpathGives(string path, string? expected)
    {
        // The temp folder may itself be reached through a link (macOS's /tmp).
        var outside = FileSystemProbe.ResolveLinks(_outside.Root)!;
        var full = _outside.Root + "/" + path;

        var resolved = FileSystemProbe.ResolveLinks(full);

        Assert.Equal(expected is null ? null : Path.Combine(outside, expected), resolved);
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal(RealPath(full), resolved);
        }
    }

    [Theory]
    [InlineData("/through.txt")]
    [InlineData("/up/secret.txt")]
    public async Task LinkThroughALinkOutOfTheRoot_IsNotServed(string path)
    {
        using var response = await _host.Client.GetAsync(path);

        Assert.Equal(404, (int)response.StatusCode);
        Assert.DoesNotContain(Secret, await response.Content.ReadAsStringAsync());
    }

    [Fact]
    public async Task LinkThatStaysInTheRoot_IsServed()
        => Assert.Equal("public page", await _host.Client.GetStringAsync("/inside.txt"));

    private static string? RealPath(string path)
    {
        var resolved = realpath(path, 0);
        if (resolved == 0)
        {
            return null;
        }

        try
        {
            return Marshal.PtrToStringUTF8(resolved);
        }
        finally
        {
            free(resolved);
        }
    }
}
