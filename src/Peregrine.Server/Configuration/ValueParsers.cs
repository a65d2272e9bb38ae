using System.Globalization;
using System.Net;
using Peregrine;

namespace Peregrine.Server.Configuration;

/// <summary>
/// Parsers for option values. Each returns false after adding one message that names the option
/// and its source, so that every bad value in every source is reported in one run.
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

    public static bool Host(SettingValue value, List<string> errors, out IPAddress? address)
    {
        var text = value.Single;
        address = null;
        if (text == "localhost" || IPAddress.TryParse(text.Trim('[', ']'), out address))
        {
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

    /// <summary>A path under the root, as the library's SpaFallback requires.</summary>
    public static bool SpaFile(SettingValue value, List<string> errors, out string file)
    {
        file = value.Values.Count == 0 ? ServerSettings.DefaultSpaFile : value.Single;
        if (file.Length > 0 && file[0] != '/' && !file.Contains('\\') && !file.Split('/').Any(s => s is "" or "." or ".."))
        {
            return true;
        }

        errors.Add($"{value.Describe()}: '{file}' must be a file under ROOT, such as 'index.html'.");
        return false;
    }

    /// <summary><c>*</c> or an origin: scheme, host and optional port, no path (RFC 6454 §6.1).</summary>
    public static bool Origin(SettingValue value, string origin, List<string> errors)
    {
        if (origin == "*" || (Uri.TryCreate(origin, UriKind.Absolute, out var uri)
            && (uri.Scheme == Uri.UriSchemeHttp || uri.Scheme == Uri.UriSchemeHttps)
            && uri.AbsolutePath == "/" && !origin.EndsWith('/') && uri.Query.Length == 0 && uri.Fragment.Length == 0))
        {
            return true;
        }

        errors.Add($"{value.Describe()}: '{origin}' is not '*' or an origin such as 'https://app.example.com' (scheme, host, optional port, no path).");
        return false;
    }

    /// <summary><c>Name: value</c>, the way the header appears on the wire (RFC 9110 §5).</summary>
    public static bool Header(SettingValue value, string text, List<string> errors, out KeyValuePair<string, string> header)
    {
        header = default;
        var colon = text.IndexOf(':');
        var name = colon < 0 ? "" : text[..colon];
        var field = colon < 0 ? "" : text[(colon + 1)..].Trim(' ', '\t');
        if (name.Length == 0 || !name.All(IsTokenChar))
        {
            errors.Add($"{value.Describe()}: '{text}' is not 'Name: value' with a valid header name.");
            return false;
        }

        if (field.Length == 0 || !IsFieldValue(field))
        {
            errors.Add($"{value.Describe()}: '{text}' needs a value of visible ASCII characters, spaces and tabs.");
            return false;
        }

        header = new(name, field);
        return true;
    }

    /// <summary><c>GLOB=VALUE</c>: split at the first <c>=</c>, since Cache-Control values hold them (<c>max-age=60</c>).</summary>
    public static bool CacheRule(SettingValue value, string text, List<string> errors, out CacheRule rule)
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

        if (!IsFieldValue(cacheControl))
        {
            errors.Add($"{value.Describe()}: '{text}' has a Cache-Control value with characters other than visible ASCII, spaces and tabs.");
            return false;
        }

        rule = new CacheRule(glob, cacheControl);
        return true;
    }

    private static bool IsTokenChar(char c) => char.IsAsciiLetterOrDigit(c) || "!#$%&'*+-.^_`|~".Contains(c);

    // RFC 9110 §5.5: visible ASCII, space and tab; CR and LF above all would split the response.
    private static bool IsFieldValue(string value) => value.All(c => c is '\t' or (>= ' ' and <= '~'));
}
