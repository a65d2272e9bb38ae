using System.Buffers;
using System.Collections.Concurrent;
using System.Runtime.InteropServices;
using System.Security.Cryptography;
using System.Text;
using Microsoft.Extensions.Primitives;

namespace Peregrine.Server.Auth;

/// <summary>
/// Checks <c>Authorization: Basic</c> credentials (RFC 7617) against the configured users.
/// </summary>
/// <remarks>
/// <para>Timing. A known user's password is checked by hashing the candidate in full and
/// comparing in constant time (<see cref="PasswordCheck"/>). An unknown user is checked against
/// a decoy hash of the dearest kind and cost among the users, so that it costs what a known user
/// with a wrong password costs (exactly so when all users' hashes share a kind and cost, the usual
/// case). Finding the user name in a dictionary is not constant-time; its cost is negligible
/// beside a bcrypt or SHA-512 crypt check.</para>
/// <para>Remembered successes. bcrypt is slow by design, and a browser sends the same
/// Authorization value with every request, so a value that passed is remembered and later
/// requests with it skip the hash. The table is keyed by an HMAC-SHA-256 of the whole value
/// under a key made at start-up, never the value itself: what a lookup's timing could reveal
/// is how a random-looking key compares with others, nothing about a password. Only values that
/// passed are kept, so a quick answer only ever says what the 200 says anyway, and a client can
/// add entries only with right credentials; at <see cref="MaxRemembered"/> the table is emptied.
/// Users are fixed for the life of the process, so nothing remembered goes stale.</para>
/// </remarks>
internal sealed class BasicAuthenticator
{
    public const string Realm = "Peregrine";

    public const int MaxRemembered = 1024;

    // Longer Authorization values are refused unread; 4 KiB is ample for a user name and password.
    private const int MaxValueLength = 4096;

    private readonly Dictionary<string, PasswordCheck> _users;
    private readonly PasswordCheck _decoy;
    private readonly byte[] _rememberKey = RandomNumberGenerator.GetBytes(32);
    private readonly ConcurrentDictionary<(ulong, ulong, ulong, ulong), bool> _remembered = new();

    public BasicAuthenticator(Dictionary<string, PasswordCheck> users)
    {
        _users = users;
        _decoy = users.Values.MaxBy(check => check.Cost)!.Decoy();
    }

    public int UserCount => _users.Count;

    /// <summary>True when this exact value passed before: no hash is computed.</summary>
    public bool IsRemembered(StringValues authorization)
        => authorization.Count == 1 && TryKey(authorization[0], out var key) && _remembered.ContainsKey(key);

    /// <summary>Checks the credentials in full (slow by design: run it off the request's thread).</summary>
    public bool Verify(StringValues authorization)
    {
        if (authorization.Count != 1 || !TryKey(authorization[0], out var key) || !TryDecode(authorization[0]!, out var user, out var password))
        {
            return false;
        }

        var known = _users.TryGetValue(user, out var check);
        var matches = (check ?? _decoy).Matches(password);
        if (!known || !matches)
        {
            return false;
        }

        if (_remembered.Count >= MaxRemembered)
        {
            _remembered.Clear();
        }

        _remembered[key] = true;
        return true;
    }

    private bool TryKey(string? value, out (ulong, ulong, ulong, ulong) key)
    {
        key = default;
        if (value is null || value.Length > MaxValueLength)
        {
            return false;
        }

        var buffer = ArrayPool<byte>.Shared.Rent(Encoding.UTF8.GetMaxByteCount(value.Length));
        try
        {
            var length = Encoding.UTF8.GetBytes(value, buffer);
            Span<byte> mac = stackalloc byte[32];
            HMACSHA256.HashData(_rememberKey, buffer.AsSpan(0, length), mac);
            var words = MemoryMarshal.Cast<byte, ulong>(mac);
            key = (words[0], words[1], words[2], words[3]);
            return true;
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(buffer);
        }
    }

    /// <summary>RFC 7617 §2: <c>Basic</c>, then base64 of <c>user-id ":" password</c>, in UTF-8 (the charset the challenge names).</summary>
    private static bool TryDecode(string value, out string user, out string password)
    {
        user = password = "";
        var text = value.AsSpan().Trim();
        if (text.Length < 6 || !text.StartsWith("Basic ", StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }

        var token = text[6..].TrimStart(' ');
        var bytes = new byte[token.Length];
        if (!Convert.TryFromBase64Chars(token, bytes, out var length))
        {
            return false;
        }

        var decoded = Encoding.UTF8.GetString(bytes, 0, length);
        CryptographicOperations.ZeroMemory(bytes);
        var colon = decoded.IndexOf(':');
        if (colon < 0)
        {
            return false;
        }

        user = decoded[..colon];
        password = decoded[(colon + 1)..];
        return true;
    }
}
