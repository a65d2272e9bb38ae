using System.Globalization;
using System.Net;
using Peregrine;
using Peregrine.Validation;

namespace Peregrine.Server.Configuration;

/// <summary>Reads one value of an option; false after adding one message that names the option and its source.</summary>
internal delegate bool ValueParser<T>(SettingValue value, List<string> errors, out T result);

/// <summary>
/// Reads one item of a list option. <paramref name="earlier"/> holds the items of the same value
/// already read, for rules across items (a header given twice).
/// </summary>
internal delegate bool ItemParser<T>(SettingValue value, string text, IReadOnlyList<T> earlier, List<string> errors, out T item);

/// <summary>
/// Parsers for option values. Each returns false after adding one message that names the option
/// and its source, so that every bad value in every source is reported in one run. Where the
/// library has a rule for the value (origins, headers, Cache-Control values, the SPA file), the rule is the
/// library's own (<see cref="PeregrineOptionsValidator"/>) and only its message is prefixed here:
/// the two cannot drift apart.
/// </summary>
internal static class ValueParsers
{
    public static bool Port(SettingValue value, List<string> errors, out int port)
    {
        var text = value.Single;
        if (int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out port) && port <= 65535)
        {
            return true;
        }

        // Kubernetes injects PEREGRINE_PORT=tcp://10.0.0.1:8080 into pods when a Service is
        // named "peregrine" (service links), which would otherwise read as a bad port.
        var hint = value.Source.Kind == SourceKind.Environment && text.Contains("://", StringComparison.Ordinal)
            ? " It looks like a Kubernetes service link: set enableServiceLinks: false on the pod, or name the Service differently."
            : "";
        errors.Add($"{value.Describe()}: '{text}' is not a port number (0 to 65535).{hint}");
        return false;
    }

    /// <summary>An IP address, or <c>localhost</c> (both loopbacks: no single address).</summary>
    public static bool Host(SettingValue value, List<string> errors, out (string Name, IPAddress? Address) host)
    {
        var text = value.Single;
        host = (text, null);
        if (text == "localhost")
        {
            return true;
        }

        if (IPAddress.TryParse(text.Trim('[', ']'), out var address))
        {
            host = (text, address);
            return true;
        }

        errors.Add($"{value.Describe()}: '{text}' is not an IP address or 'localhost'.");
        return false;
    }

    public static bool Boolean(SettingValue value, List<string> errors, out bool result)
    {
        switch (value.Single.ToLowerInvariant())
        {
            case "true" or "1" or "yes" or "on":
                result = true;
                return true;
            case "false" or "0" or "no" or "off":
                result = false;
                return true;
            default:
                errors.Add($"{value.Describe()}: '{value.Single}' is not true or false (also accepted: 1/0, yes/no, on/off).");
                result = false;
                return false;
        }
    }

    /// <summary>A byte count: digits with an optional binary suffix, K, M, G or T (also KB, KiB...).</summary>
    public static bool Size(SettingValue value, List<string> errors, out long bytes)
    {
        var text = value.Single.Trim();
        var digits = text.AsSpan();
        var end = 0;
        while (end < digits.Length && char.IsAsciiDigit(digits[end]))
        {
            end++;
        }

        var shift = text[end..].ToUpperInvariant() switch
        {
            "" or "B" => 0,
            "K" or "KB" or "KIB" => 10,
            "M" or "MB" or "MIB" => 20,
            "G" or "GB" or "GIB" => 30,
            "T" or "TB" or "TIB" => 40,
            _ => -1,
        };
        if (end > 0 && shift >= 0 && long.TryParse(digits[..end], NumberStyles.None, CultureInfo.InvariantCulture, out var number)
            && number <= long.MaxValue >> shift)
        {
            bytes = number << shift;
            return true;
        }

        errors.Add($"{value.Describe()}: '{value.Single}' is not a size (bytes, or a number with K, M, G or T, as in 64M).");
        bytes = 0;
        return false;
    }

    public static bool Seconds(SettingValue value, List<string> errors, out TimeSpan duration)
    {
        if (double.TryParse(value.Single, NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var seconds) && seconds <= 3600)
        {
            duration = TimeSpan.FromSeconds(seconds);
            return true;
        }

        errors.Add($"{value.Describe()}: '{value.Single}' is not a number of seconds (0 to 3600).");
        duration = default;
        return false;
    }

    public static bool NonEmpty(SettingValue value, List<string> errors, out string text)
    {
        text = value.Single;
        if (text.Length > 0)
        {
            return true;
        }

        errors.Add($"{value.Describe()}: a value is required.");
        return false;
    }

    /// <summary>The value as given, whatever it is (a password).</summary>
    public static bool Text(SettingValue value, List<string> errors, out string text)
    {
        text = value.Single;
        return true;
    }

    /// <summary>A file, or standard output (<c>-</c>) when the option is given bare.</summary>
    public static bool FileOrStandardOutput(SettingValue value, List<string> errors, out string target)
    {
        if (value.Values.Count == 0)
        {
            target = "-";
            return true;
        }

        return NonEmpty(value, errors, out target);
    }

    /// <summary>A file under the root for the library's SpaFallback; bare, the default one.</summary>
    public static bool SpaFile(SettingValue value, List<string> errors, out string file)
    {
        file = value.Values.Count == 0 ? ServerSettings.DefaultSpaFile : value.Single;
        return Check(value, PeregrineOptionsValidator.SpaFallbackProblem(file), errors);
    }

    /// <summary>An index file name, by the library's rule for DefaultDocuments.</summary>
    public static bool IndexFile(SettingValue value, string name, IReadOnlyList<string> earlier, List<string> errors, out string result)
    {
        result = name;
        return Check(value, PeregrineOptionsValidator.DefaultDocumentProblem(name), errors);
    }

    /// <summary>A file under the root, by the library's rule for NotFoundPage.</summary>
    public static bool RootFile(SettingValue value, List<string> errors, out string file)
    {
        file = value.Single;
        return Check(value, PeregrineOptionsValidator.RootFileProblem(file), errors);
    }

    /// <summary>
    /// <c>USER:PASSWORD</c>, split at the first colon (RFC 7617 §2: a user-id has none), once per
    /// user. Messages quote the user only, never the password.
    /// </summary>
    public static bool Credentials(SettingValue value, string text, IReadOnlyList<(string User, string Password)> earlier, List<string> errors, out (string User, string Password) credentials)
    {
        var colon = text.IndexOf(':');
        credentials = colon < 0 ? default : (text[..colon], text[(colon + 1)..]);
        if (colon <= 0 || credentials.Password.Length == 0 || credentials.User.Any(char.IsControl))
        {
            errors.Add($"{value.Describe()}: '{(colon < 0 ? text : credentials.User)}' is not 'USER:PASSWORD' with a user and a password.");
            return false;
        }

        var user = credentials.User;
        if (earlier.Any(c => c.User == user))
        {
            errors.Add($"{value.Describe()}: the user '{user}' is given twice.");
            return false;
        }

        return true;
    }

    /// <summary><c>*</c> or an origin, by the library's rule for CorsOrigins.</summary>
    public static bool Origin(SettingValue value, string origin, IReadOnlyList<string> earlier, List<string> errors, out string result)
    {
        result = origin;
        return Check(value, PeregrineOptionsValidator.OriginProblem(origin), errors);
    }

    /// <summary>
    /// <c>Name: value</c>, the way the header appears on the wire (RFC 9110 §5), by the library's
    /// rule for Headers (a reserved name is refused here, under the flag's name), once per name.
    /// </summary>
    public static bool Header(SettingValue value, string text, IReadOnlyList<KeyValuePair<string, string>> earlier, List<string> errors, out KeyValuePair<string, string> header)
    {
        var colon = text.IndexOf(':');
        header = colon < 0 ? default : new(text[..colon], text[(colon + 1)..].Trim(' ', '\t'));
        if (colon <= 0)
        {
            errors.Add($"{value.Describe()}: '{text}' is not 'Name: value' with a valid header name.");
            return false;
        }

        var name = header.Key;
        if (earlier.Any(h => string.Equals(h.Key, name, StringComparison.OrdinalIgnoreCase)))
        {
            errors.Add($"{value.Describe()}: the header '{name}' is given twice.");
            return false;
        }

        return Check(value, PeregrineOptionsValidator.HeaderProblem(name, header.Value), errors);
    }

    /// <summary><c>GLOB=VALUE</c>: split at the first <c>=</c>, since Cache-Control values hold them (<c>max-age=60</c>).</summary>
    public static bool CacheRule(SettingValue value, string text, IReadOnlyList<CacheRule> earlier, List<string> errors, out CacheRule rule)
    {
        rule = null!;
        var equals = text.IndexOf('=');
        var glob = equals < 0 ? "" : text[..equals].Trim();
        var cacheControl = equals < 0 ? "" : text[(equals + 1)..].Trim(' ', '\t');
        if (glob.Length == 0)
        {
            errors.Add($"{value.Describe()}: '{text}' is not 'GLOB=VALUE', as in '*.html=no-cache'.");
            return false;
        }

        if (PeregrineOptionsValidator.HeaderValueProblem(cacheControl, required: false) is { } problem)
        {
            errors.Add($"{value.Describe()}: '{text}' {problem}");
            return false;
        }

        rule = new CacheRule(glob, cacheControl);
        return true;
    }

    /// <summary>Adds the library's message for a value, under the option's name and source.</summary>
    public static bool Check(SettingValue value, string? problem, List<string> errors)
    {
        if (problem is null)
        {
            return true;
        }

        errors.Add($"{value.Describe()}: {problem}");
        return false;
    }
}
