using System.Text;
using Peregrine.Server.Auth;

namespace Peregrine.Tests.Server.Auth;

public sealed class Sha512CryptTests
{
    // The specification's own vectors, and ones made on Debian with
    // `openssl passwd -6 -salt SALT PASSWORD` and `mkpasswd -m sha-512 -S SALT -R ROUNDS PASSWORD`.
    [Theory]
    [InlineData("Hello world!", "$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1")]
    [InlineData("Hello world!", "$6$rounds=10000$saltstringsaltst$OW1/O6BYHV6BcXZu8QVeXbDWra3Oeqh0sbHbbMCVNSnCM/UrjmM0Dp8vOuZeHBy/YTBmSK6H9qs/y3RnOaw5v.")]
    [InlineData("we have a short salt string but not a short password", "$6$rounds=77777$short$WuQyW2YR.hBNpjjRhpYD/ifIw05xdfeEyQoMxIXbkvr0gge1a1x3yRULJ5CCaUeOxFmtlcGZelFl5CxtgfiAc0")]
    [InlineData("a very much longer text to encrypt.  This one even stretches over morethan one line.", "$6$rounds=1400$anotherlongsalts$POfYwTEok97VWcjxIiSOjiykti.o/pQs.wPvMxQ6Fm7I6IoYN3CmLs66x9t0oSwbtEW7o7UmJEiDwGqd8p4ur1")]
    [InlineData("x", "$6$toolongsaltstrin$m5UCdGkMg16fnZB/afayhHcFYEQvnTRoKod8GIJKB0rGGl9IQGUPKeGHHw5xPOFVPjhTAcuzioT6ZcDqsMKJ80")]
    [InlineData("pässwörd", "$6$rounds=10000$saltsalt$DWODAoD4tL/RVbgQsRZeD.TW6CZc.QAIqFhN54K2U4LTsS2vUWd9OxL4rWK1YapHSyWrs3yRSc/yekwDIsNyS0")]
    public void Hash_MatchesTheReference(string password, string expected)
    {
        Assert.True(Sha512Crypt.TryParse(expected, out var salt, out var rounds, out var roundsGiven));

        Assert.Equal(expected, Sha512Crypt.Hash(Encoding.UTF8.GetBytes(password), salt, rounds, roundsGiven));
    }

    [Fact]
    public void LongPassword_OverSeveralDigestBlocks_MatchesTheReference()
    {
        // crypt(3) from Debian's libcrypt, 200 times 'x'.
        const string expected = "$6$abc$9bIqFS3gcEah7ONB5aYjFczb7Fkaut01.W86FsbxH3PnKOS.T6QNYs7qzjm/MziNMzBBXqOaoSNUc4PtFnUj0.";
        Assert.True(Sha512Crypt.TryParse(expected, out var salt, out var rounds, out var roundsGiven));

        Assert.Equal(expected, Sha512Crypt.Hash(Encoding.UTF8.GetBytes(new string('x', 200)), salt, rounds, roundsGiven));
    }

    [Theory]
    [InlineData("$6$salt$tooshort")]
    [InlineData("$6$rounds=x$salt$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35inz1")]
    [InlineData("$6$saltstring")]
    [InlineData("$5$saltstring$5B8vYYiY.CVt1RlTTf8KbXBH3hsxY/GNooZF4DoSPB")]
    [InlineData("$6$saltstring$svn8UoSVapNtMuq1ukKS4tPQd8iKwSMHWjl/O817G3uBnIFNjnQJuesI68u4OTLiBFdcbYEdFCoEOfaS35in!1")]
    public void Malformed_IsNotParsed(string text) => Assert.False(Sha512Crypt.TryParse(text, out _, out _, out _));
}
