namespace Peregrine.Indexing;

/// <summary>
/// Recognises file names that carry a content fingerprint, the convention of bundlers (webpack,
/// Vite, esbuild, Parcel) and of ASP.NET Core's MapStaticAssets: such a name changes whenever
/// the content does, so the file can be cached for a year as immutable.
/// </summary>
internal static class Fingerprint
{
    private const int MinLength = 8;

    /// <summary>
    /// True when the part of the name just before the extension, separated by a dot or a dash,
    /// is 8 or more lower-case hexadecimal characters mixing digits and letters
    /// (<c>app.3f9a1c2b.js</c>), or 8 or more base64url characters mixing upper case, lower case
    /// and digits (<c>index-BkQ3x9Zt.js</c>).
    /// </summary>
    public static bool IsFingerprinted(ReadOnlySpan<char> fileName) => Locate(fileName, out _, out _);

    /// <summary>
    /// Where the fingerprint of a fingerprinted name is: it starts at <paramref name="start"/>
    /// (just after its dot or dash) and ends at <paramref name="end"/> (the extension's dot).
    /// False, as <see cref="IsFingerprinted"/>, for any other name.
    /// </summary>
    public static bool Locate(ReadOnlySpan<char> fileName, out int start, out int end)
    {
        start = end = -1;
        var dot = fileName.LastIndexOf('.');
        if (dot <= 0)
        {
            return false;
        }

        var stem = fileName[..dot];
        var separator = stem.LastIndexOfAny('.', '-');
        if (separator <= 0)
        {
            return false;
        }

        var part = stem[(separator + 1)..];
        if (part.Length < MinLength)
        {
            return false;
        }

        start = separator + 1;
        end = dot;

        bool allHex = true, hasDigit = false, hasLower = false, hasUpper = false;
        foreach (var c in part)
        {
            if (char.IsAsciiDigit(c))
            {
                hasDigit = true;
            }
            else if (char.IsAsciiLetterLower(c))
            {
                hasLower = true;
                allHex &= c <= 'f';
            }
            else if (char.IsAsciiLetterUpper(c))
            {
                hasUpper = true;
                allHex = false;
            }
            else if (c == '_')
            {
                allHex = false;
            }
            else
            {
                return false;
            }
        }

        // A wrong "yes" caches a changing file for a year, a wrong "no" only costs revalidation,
        // so both forms must look like hashes: hex must mix digits and letters (a date such as
        // 20240101 is not a hash), base64url must mix upper case, lower case and digits.
        return hasDigit && hasLower && (allHex || hasUpper);
    }
}
