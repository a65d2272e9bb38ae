using System.Net;
using System.Net.Http.Headers;
using System.Text;
using Peregrine.Server.Configuration;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Server.Auth;

/// <summary>Basic authentication in the standalone server, through a real Kestrel.</summary>
public sealed class BasicAuthTests : IDisposable
{
    // `htpasswd -nbB -C 4 carol 'pâss:wörd'` and `openssl passwd -6 -salt saltstring 'Hello world!'`.
    private const string HtpasswdLines =
        "# staging users\n\ncarol:$2y$04$0El4sNolVDFZERQ7ke7byesm1Flsd85g3NVIYHQZXSBf0/zEE.DQ.\n"
        + "dave:$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1\n";

    private readonly TempTree _tree = new();

    public BasicAuthTests()
    {
        _tree.Write("site/index.html", "secret home");
        _tree.Write("users", HtpasswdLines);
    }

    private string Site => Path.Combine(_tree.Root, "site");

    private string UsersFile => Path.Combine(_tree.Root, "users");

    public void Dispose() => _tree.Dispose();

    private static async Task<HttpResponseMessage> GetAsync(RunningServer server, string path, string? user, string? password, string scheme = "Basic")
    {
        using var client = server.CreateClient();
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        if (user is not null)
        {
            request.Headers.Authorization = new AuthenticationHeaderValue(scheme, Convert.ToBase64String(Encoding.UTF8.GetBytes($"{user}:{password}")));
        }

        return await client.SendAsync(request);
    }

    private static void AssertChallenged(HttpResponseMessage response)
    {
        Assert.Equal(HttpStatusCode.Unauthorized, response.StatusCode);
        Assert.Equal("Basic realm=\"Peregrine\", charset=\"UTF-8\"", response.Headers.WwwAuthenticate.ToString());
    }

    [Fact]
    public async Task CommandLineUser_WithoutWithRightAndWrongCredentials()
    {
        await using var server = await RunningServer.StartAsync(Site, "--basic-auth", "alice:s3cret:with colon", "--allow-insecure-auth");

        AssertChallenged(await GetAsync(server, "/", null, null));

        using var right = await GetAsync(server, "/", "alice", "s3cret:with colon");
        Assert.Equal(HttpStatusCode.OK, right.StatusCode);
        Assert.Equal("secret home", await right.Content.ReadAsStringAsync());

        AssertChallenged(await GetAsync(server, "/", "alice", "s3cret"));
        AssertChallenged(await GetAsync(server, "/", "mallory", "s3cret:with colon"));
        AssertChallenged(await GetAsync(server, "/", "alice", "s3cret:with colon", scheme: "Bearer"));
    }

    [Fact]
    public async Task RememberedCredentials_StillPass_AndOthersStillFail()
    {
        await using var server = await RunningServer.StartAsync(Site, "--basic-auth", "alice:pw", "--allow-insecure-auth");

        for (var i = 0; i < 3; i++)
        {
            using var right = await GetAsync(server, "/index.html", "alice", "pw");
            Assert.Equal(HttpStatusCode.OK, right.StatusCode);
            AssertChallenged(await GetAsync(server, "/index.html", "alice", "pW"));
        }
    }

    [Theory]
    [InlineData("carol", "pâss:wörd")]
    [InlineData("dave", "Hello world!")]
    public async Task HtpasswdUsers_BcryptAndSha512Crypt_PassWithTheirPassword(string user, string password)
    {
        await using var server = await RunningServer.StartAsync(Site, "--basic-auth-file", UsersFile, "--allow-insecure-auth");

        using var right = await GetAsync(server, "/", user, password);
        Assert.Equal(HttpStatusCode.OK, right.StatusCode);
        AssertChallenged(await GetAsync(server, "/", user, password + "!"));
    }

    [Fact]
    public async Task Health_StaysOpen_MissingPagesAreChallengedToo()
    {
        await using var server = await RunningServer.StartAsync(Site, "--basic-auth", "alice:pw", "--allow-insecure-auth");

        using var health = await GetAsync(server, "/healthz", null, null);
        Assert.Equal(HttpStatusCode.OK, health.StatusCode);
        AssertChallenged(await GetAsync(server, "/missing", null, null));
    }

    [Fact]
    public void Cleartext_WithoutAllowInsecureAuth_StopsStartUp_NamingTheOption()
    {
        var loaded = SettingsLoader.Load([Site, "--basic-auth", "alice:pw"], new Dictionary<string, string>());

        Assert.Null(loaded.Settings);
        var error = Assert.Single(loaded.Errors);
        Assert.StartsWith("--basic-auth (command line):", error);
        Assert.Contains("--allow-insecure-auth", error);
    }

    [Fact]
    public void BadLines_StopStartUp_NamingTheFileAndLine()
    {
        _tree.Write("bad", "carol:$2y$04$0El4sNolVDFZERQ7ke7byesm1Flsd85g3NVIYHQZXSBf0/zEE.DQ.\nno-colon-here\nerin:$apr1$xyz$abc\ncarol:$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1\n");
        var file = Path.Combine(_tree.Root, "bad");

        var loaded = SettingsLoader.Load([Site, "--basic-auth-file", file, "--allow-insecure-auth"], new Dictionary<string, string>());

        Assert.Null(loaded.Settings);
        Assert.Collection(
            loaded.Errors,
            e => Assert.Equal($"--basic-auth-file (command line): '{file}' line 2: is not 'user:hash'.", e),
            e => Assert.StartsWith($"--basic-auth-file (command line): '{file}' line 3: the hash for 'erin' uses a hash that is not accepted", e),
            e => Assert.Equal($"--basic-auth-file (command line): '{file}' line 4: the user 'carol' is given twice.", e));
    }

    [Fact]
    public void CommandLinePassword_IsNeverQuotedInAnError()
    {
        var loaded = SettingsLoader.Load([Site, "--basic-auth", ":hunter2", "--basic-auth", "bob:x", "--basic-auth", "bob:y", "--allow-insecure-auth"], new Dictionary<string, string>());

        Assert.Equal(2, loaded.Errors.Count);
        Assert.All(loaded.Errors, e => Assert.DoesNotContain("hunter2", e));
        Assert.Contains(loaded.Errors, e => e.Contains("the user 'bob' is given twice", StringComparison.Ordinal));
    }

    [Fact]
    public void EnvironmentAndConfig_SpellTheOptions()
    {
        var loaded = SettingsLoader.Load([Site], new Dictionary<string, string>
        {
            ["PEREGRINE_BASIC_AUTH"] = "alice:pw\nbob:pw2",
            ["PEREGRINE_ALLOW_INSECURE_AUTH"] = "1",
        });

        Assert.Empty(loaded.Errors);
        Assert.Equal(2, loaded.Settings!.Authenticator!.UserCount);
        loaded.Settings.Dispose();
    }
}
