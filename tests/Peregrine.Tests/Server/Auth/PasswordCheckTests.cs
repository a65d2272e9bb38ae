using Peregrine.Server.Auth;

namespace Peregrine.Tests.Server.Auth;

public sealed class PasswordCheckTests
{
    // `htpasswd -nbB -C 4 carol 'pâss:wörd'` (Apache 2.4 on Debian): a $2y$ hash.
    private const string Bcrypt2y = "$2y$04$0El4sNolVDFZERQ7ke7byesm1Flsd85g3NVIYHQZXSBf0/zEE.DQ.";
    private const string BcryptPassword = "pâss:wörd";

    [Theory]
    [InlineData("$2y$")]
    [InlineData("$2a$")]
    [InlineData("$2b$")]
    public void Bcrypt_EveryPrefix_VerifiesTheRightPasswordOnly(string prefix)
    {
        // $2a$, $2b$ and $2y$ are one algorithm for passwords like this one; only the label differs.
        var check = PasswordCheck.FromHash(prefix + Bcrypt2y[4..], out var problem);

        Assert.Null(problem);
        Assert.True(check!.Matches(BcryptPassword));
        Assert.False(check.Matches("pâss:wörD"));
        Assert.False(check.Matches(""));
    }

    [Fact]
    public void Sha512Crypt_VerifiesTheRightPasswordOnly()
    {
        var check = PasswordCheck.FromHash("$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1", out _);

        Assert.True(check!.Matches("Hello world!"));
        Assert.False(check.Matches("Hello world"));
    }

    [Fact]
    public void Decoy_IsOfTheSameCost_AndRefusesEverything()
    {
        var check = PasswordCheck.FromHash(Bcrypt2y, out _)!;
        var decoy = check.Decoy();

        Assert.Equal(check.Cost, decoy.Cost);
        Assert.False(decoy.Matches(BcryptPassword));
        Assert.False(decoy.Matches(""));
    }

    [Theory]
    [InlineData("$apr1$abc$defghijklmnopqrstuvwx1", "MD5 or SHA-1")]
    [InlineData("{SHA}qUqP5cyxm6YcTAhz05Hph5gvu9M=", "MD5 or SHA-1")]
    [InlineData("plaintext", "is not a bcrypt")]
    [InlineData("$2y$04$tooshort", "well-formed bcrypt")]
    [InlineData("$2y$99$0El4sNolVDFZERQ7ke7byesm1Flsd85g3NVIYHQZXSBf0/zEE.DQ.", "well-formed bcrypt")]
    [InlineData("$6$salt$short", "well-formed SHA-512 crypt")]
    public void UnacceptedHash_SaysWhy(string hash, string reason)
    {
        Assert.Null(PasswordCheck.FromHash(hash, out var problem));
        Assert.Contains(reason, problem);
    }
}
