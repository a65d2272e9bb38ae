using System.Globalization;
using System.Security.Cryptography;
using System.Text;

namespace Peregrine.Server.Auth;

/// <summary>
/// SHA-512 crypt (<c>$6$</c>), as Ulrich Drepper specified it ("Unix crypt using SHA-256 and
/// SHA-512", 2007) and glibc, <c>openssl passwd -6</c> and <c>mkpasswd -m sha-512</c> make it:
/// the form htpasswd files and <c>/etc/shadow</c> hold. The steps below are numbered as in the
/// specification's algorithm description.
/// </summary>
internal static class Sha512Crypt
{
    public const string Prefix = "$6$";
    public const int DefaultRounds = 5000;
    private const int MinRounds = 1000;
    private const int MaxRounds = 999_999_999;
    private const int MaxSaltLength = 16;
    private const string Alphabet = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

    /// <summary>Reads <c>$6$[rounds=N$]salt$hash</c>; false when it is not that form.</summary>
    public static bool TryParse(string text, out string salt, out int rounds, out bool roundsGiven)
    {
        salt = "";
        rounds = DefaultRounds;
        roundsGiven = false;
        if (!text.StartsWith(Prefix, StringComparison.Ordinal))
        {
            return false;
        }

        var rest = text.AsSpan(Prefix.Length);
        if (rest.StartsWith("rounds="))
        {
            var end = rest.IndexOf('$');
            if (end < 0 || !int.TryParse(rest[7..end], NumberStyles.None, CultureInfo.InvariantCulture, out rounds))
            {
                return false;
            }

            // Out-of-range counts are clamped, as glibc does.
            rounds = Math.Clamp(rounds, MinRounds, MaxRounds);
            roundsGiven = true;
            rest = rest[(end + 1)..];
        }

        var dollar = rest.IndexOf('$');
        if (dollar < 0 || dollar > MaxSaltLength || rest[(dollar + 1)..].Length != 86 || rest[(dollar + 1)..].ContainsAnyExcept(Alphabet))
        {
            return false;
        }

        salt = rest[..dollar].ToString();
        return true;
    }

    /// <summary>The full <c>$6$</c> string for <paramref name="password"/> with this salt and round count.</summary>
    public static string Hash(ReadOnlySpan<byte> password, string salt, int rounds, bool roundsGiven)
    {
        var saltBytes = Encoding.UTF8.GetBytes(salt.Length > MaxSaltLength ? salt[..MaxSaltLength] : salt);
        using var sha = IncrementalHash.CreateHash(HashAlgorithmName.SHA512);
        Span<byte> a = stackalloc byte[64];
        Span<byte> b = stackalloc byte[64];

        // Steps 4-8: digest B of password, salt, password.
        sha.AppendData(password);
        sha.AppendData(saltBytes);
        sha.AppendData(password);
        sha.GetHashAndReset(b);

        // Steps 1-3, 9-12: digest A of password, salt, B for each byte of the password, then B
        // or the password for each bit of its length.
        sha.AppendData(password);
        sha.AppendData(saltBytes);
        int count;
        for (count = password.Length; count > 64; count -= 64)
        {
            sha.AppendData(b);
        }

        sha.AppendData(b[..count]);
        for (count = password.Length; count > 0; count >>= 1)
        {
            if ((count & 1) != 0)
            {
                sha.AppendData(b);
            }
            else
            {
                sha.AppendData(password);
            }
        }

        sha.GetHashAndReset(a);

        // Steps 13-16: the P sequence, digest DP of the password repeated, cut to its length.
        for (var i = 0; i < password.Length; i++)
        {
            sha.AppendData(password);
        }

        sha.GetHashAndReset(b);
        var p = Repeat(b, password.Length);

        // Steps 17-20: the S sequence, digest DS of the salt repeated 16 + A[0] times.
        for (var i = 0; i < 16 + a[0]; i++)
        {
            sha.AppendData(saltBytes);
        }

        sha.GetHashAndReset(b);
        var s = Repeat(b, saltBytes.Length);

        // Step 21: the rounds.
        for (var round = 0; round < rounds; round++)
        {
            sha.AppendData((round & 1) != 0 ? p : a);
            if (round % 3 != 0)
            {
                sha.AppendData(s);
            }

            if (round % 7 != 0)
            {
                sha.AppendData(p);
            }

            sha.AppendData((round & 1) != 0 ? a : p);
            sha.GetHashAndReset(a);
        }

        // Step 22: the output string, the digest's bytes taken three at a time in the
        // specification's order, six bits to a character, least significant first.
        var text = new StringBuilder(Prefix, 123);
        if (roundsGiven)
        {
            text.Append(CultureInfo.InvariantCulture, $"rounds={rounds}$");
        }

        text.Append(Encoding.UTF8.GetString(saltBytes)).Append('$');
        for (var i = 0; i < 21; i++)
        {
            var (x, y, z) = (i % 3) switch
            {
                0 => (i, i + 21, i + 42),
                1 => (i + 21, i + 42, i),
                _ => (i + 42, i, i + 21),
            };
            Encode(text, (a[x] << 16) | (a[y] << 8) | a[z], 4);
        }

        Encode(text, a[63], 2);
        CryptographicOperations.ZeroMemory(p);
        return text.ToString();
    }

    private static byte[] Repeat(ReadOnlySpan<byte> digest, int length)
    {
        var sequence = new byte[length];
        for (var at = 0; at < length; at += digest.Length)
        {
            digest[..Math.Min(digest.Length, length - at)].CopyTo(sequence.AsSpan(at));
        }

        return sequence;
    }

    private static void Encode(StringBuilder text, int bits, int characters)
    {
        for (var i = 0; i < characters; i++)
        {
            text.Append(Alphabet[bits & 0x3f]);
            bits >>= 6;
        }
    }
}
