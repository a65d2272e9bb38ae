using Peregrine.Server.Auth;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Reads the users of <c>--basic-auth</c> and <c>--basic-auth-file</c> at start-up, every
/// problem reported together under the option's name: a bad line names the file and the line.
/// Refuses to send passwords over cleartext unless <c>--allow-insecure-auth</c> says a proxy in
/// front terminates TLS.
/// </summary>
internal static class BasicAuthSetup
{
    public static BasicAuthenticator? Load(ServerSettings settings, List<string> errors)
    {
        if (settings.BasicAuth.Count == 0 && settings.BasicAuthFile is null)
        {
            return null;
        }

        var users = new Dictionary<string, PasswordCheck>(StringComparer.Ordinal);
        foreach (var (user, password) in settings.BasicAuth)
        {
            users[user] = new PlainCheck(password);
        }

        if (settings.BasicAuthFile is { } file)
        {
            ReadFile(file, settings.Describe(OptionTable.BasicAuthFile), users, errors);
        }

        if (settings.TlsCert is null && settings.TlsPfx is null && !settings.AllowInsecureAuth)
        {
            var option = settings.BasicAuth.Count != 0 ? settings.Describe(OptionTable.BasicAuth) : settings.Describe(OptionTable.BasicAuthFile);
            errors.Add($"{option}: passwords would cross the network in cleartext. Serve HTTPS (--tls-cert and --tls-key, or --tls-pfx), or give {OptionTable.AllowInsecureAuth.Flag} when a proxy in front terminates TLS.");
        }

        return users.Count == 0 ? null : new BasicAuthenticator(users);
    }

    /// <summary>htpasswd's format: one <c>user:hash</c> a line; blank lines and lines starting with <c>#</c> are skipped.</summary>
    private static void ReadFile(string file, string option, Dictionary<string, PasswordCheck> users, List<string> errors)
    {
        string[] lines;
        try
        {
            lines = File.ReadAllLines(file);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            errors.Add($"{option}: cannot read '{file}': {ex.Message}");
            return;
        }

        var found = 0;
        for (var i = 0; i < lines.Length; i++)
        {
            var line = lines[i].Trim();
            if (line.Length == 0 || line[0] == '#')
            {
                continue;
            }

            var where = $"{option}: '{file}' line {i + 1}";
            var colon = line.IndexOf(':');
            if (colon <= 0)
            {
                errors.Add($"{where}: is not 'user:hash'.");
                continue;
            }

            var user = line[..colon];
            if (PasswordCheck.FromHash(line[(colon + 1)..], out var problem) is not { } check)
            {
                errors.Add($"{where}: the hash for '{user}' {problem}");
                continue;
            }

            if (!users.TryAdd(user, check))
            {
                errors.Add($"{where}: the user '{user}' is given twice.");
                continue;
            }

            found++;
        }

        if (found == 0 && !errors.Any(e => e.StartsWith(option, StringComparison.Ordinal)))
        {
            errors.Add($"{option}: '{file}' holds no users.");
        }
    }
}
