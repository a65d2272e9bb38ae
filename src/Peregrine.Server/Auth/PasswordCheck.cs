using System.Security.Cryptography;
using System.Text;

namespace Peregrine.Server.Auth;

/// <summary>
/// How one user's password is checked: against a bcrypt or SHA-512 crypt hash from an htpasswd
/// file, or against a password given on the command line. Every check computes the candidate's
/// hash in full and compares with <see cref="CryptographicOperations.FixedTimeEquals"/>, so the
/// time taken does not depend on how much of the password was right.
/// </summary>
internal abstract class PasswordCheck
{
    public abstract bool Matches(string password);

    /// <summary>
    /// A check of the same kind and cost that no password passes, run for an unknown user so
    /// that answering one costs what a known user with a wrong password costs.
    /// </summary>
    public abstract PasswordCheck Decoy();

    /// <summary>
    /// The cost of one check, to pick the decoy (the dearest), in rounds of SHA-512 crypt: exact
    /// between hashes of one kind, an estimate across kinds (one bcrypt iteration measured about
    /// as dear as 130 SHA-512 crypt rounds).
    /// </summary>
    public abstract long Cost { get; }

    /// <summary>Reads an htpasswd hash: bcrypt (<c>$2y$</c>, <c>$2a$</c>, <c>$2b$</c>) or SHA-512 crypt (<c>$6$</c>); null with a reason otherwise.</summary>
    public static PasswordCheck? FromHash(string hash, out string? problem)
    {
        problem = null;
        if (hash.StartsWith("$2y$", StringComparison.Ordinal) || hash.StartsWith("$2a$", StringComparison.Ordinal) || hash.StartsWith("$2b$", StringComparison.Ordinal))
        {
            if (BcryptCheck.TryCreate(hash) is { } bcrypt)
            {
                return bcrypt;
            }

            problem = "is not a well-formed bcrypt hash ($2y$NN$ and 53 characters of salt and hash).";
            return null;
        }

        if (hash.StartsWith(Sha512Crypt.Prefix, StringComparison.Ordinal))
        {
            if (Sha512Crypt.TryParse(hash, out var salt, out var rounds, out var roundsGiven))
            {
                return new Sha512CryptCheck(hash, salt, rounds, roundsGiven);
            }

            problem = "is not a well-formed SHA-512 crypt hash ($6$[rounds=N$]salt$ and 86 characters).";
            return null;
        }

        problem = hash.StartsWith("$apr1$", StringComparison.Ordinal) || hash.StartsWith("{SHA}", StringComparison.Ordinal) || hash.StartsWith("$1$", StringComparison.Ordinal)
            ? "uses a hash that is not accepted (MD5 or SHA-1, both too fast to resist guessing); make it with 'htpasswd -B' (bcrypt) or 'mkpasswd -m sha-512'."
            : "is not a bcrypt ($2y$) or SHA-512 crypt ($6$) hash; make one with 'htpasswd -B' or 'mkpasswd -m sha-512'.";
        return null;
    }

    protected static bool SameText(string expected, string actual)
        => CryptographicOperations.FixedTimeEquals(Encoding.ASCII.GetBytes(expected), Encoding.ASCII.GetBytes(actual));
}

/// <summary>bcrypt, through BCrypt.Net-Next: the candidate is hashed with the stored salt and cost, then compared.</summary>
internal sealed class BcryptCheck : PasswordCheck
{
    private readonly string _hash;
    private readonly int _workFactor;

    private BcryptCheck(string hash, int workFactor)
    {
        _hash = hash;
        _workFactor = workFactor;
    }

    public override long Cost => (1L << _workFactor) * 128;

    public static BcryptCheck? TryCreate(string hash)
    {
        // $2y$ + two-digit cost + $ + 22 characters of salt + 31 of hash.
        if (hash.Length != 60 || hash[6] != '$' || !int.TryParse(hash.AsSpan(4, 2), out var cost) || cost is < 4 or > 31)
        {
            return null;
        }

        try
        {
            BCrypt.Net.BCrypt.HashPassword("", hash);
        }
        catch (BCrypt.Net.SaltParseException)
        {
            return null;
        }

        return new BcryptCheck(hash, cost);
    }

    public override bool Matches(string password) => SameText(_hash, BCrypt.Net.BCrypt.HashPassword(password, _hash));

    public override PasswordCheck Decoy()
        => new BcryptCheck(BCrypt.Net.BCrypt.HashPassword(RandomNumberGenerator.GetHexString(32), BCrypt.Net.BCrypt.GenerateSalt(_workFactor)), _workFactor);
}

/// <summary>SHA-512 crypt, the server's own (<see cref="Sha512Crypt"/>).</summary>
internal sealed class Sha512CryptCheck(string hash, string salt, int rounds, bool roundsGiven) : PasswordCheck
{
    public override long Cost => rounds;

    public override bool Matches(string password) => SameText(hash, Sha512Crypt.Hash(Encoding.UTF8.GetBytes(password), salt, rounds, roundsGiven));

    public override PasswordCheck Decoy()
    {
        var decoySalt = RandomNumberGenerator.GetString("abcdefghijklmnopqrstuvwxyz0123456789", 16);
        return new Sha512CryptCheck(Sha512Crypt.Hash(RandomNumberGenerator.GetBytes(32), decoySalt, rounds, roundsGiven), decoySalt, rounds, roundsGiven);
    }
}

/// <summary>
/// A password given on the command line (<c>--basic-auth USER:PASSWORD</c>): kept as its SHA-256
/// digest, compared digest to digest. It is in the process's arguments anyway; a slow hash would
/// protect nothing.
/// </summary>
internal sealed class PlainCheck(string password) : PasswordCheck
{
    private readonly byte[] _digest = SHA256.HashData(Encoding.UTF8.GetBytes(password));

    public override long Cost => 0;

    public override bool Matches(string password)
        => CryptographicOperations.FixedTimeEquals(_digest, SHA256.HashData(Encoding.UTF8.GetBytes(password)));

    public override PasswordCheck Decoy() => new PlainCheck(RandomNumberGenerator.GetHexString(32));
}
