namespace Peregrine.Sources.Bucket;

/// <summary>Which object keys can become files under the local copy, and where.</summary>
/// <remarks>
/// Security limit: a key is an arbitrary string, and the copy is written to the local disk. A key
/// is taken only when every segment is a plain name: no empty, <c>.</c> or <c>..</c> segment, no
/// backslash, no control character, and its path under the prefix at most 1,024 bytes. So no key
/// can write outside the version folder, whoever can write to the bucket.
/// </remarks>
internal static class BucketPaths
{
    /// <summary>The relative path of <paramref name="key"/> under <paramref name="prefix"/>, or null when it cannot be a file.</summary>
    public static string? RelativePath(string key, string prefix)
    {
        if (!key.StartsWith(prefix, StringComparison.Ordinal) || key.Length == prefix.Length || key[^1] == '/')
        {
            // Outside the prefix, or a "folder" marker object that consoles make.
            return null;
        }

        var relative = key[prefix.Length..];
        if (relative.Length > 1024)
        {
            return null;
        }

        foreach (var segment in relative.Split('/'))
        {
            if (!IsSegment(segment))
            {
                return null;
            }
        }

        return relative;
    }

    /// <summary>A segment a file or folder may be named: not empty, not a dot segment, no slash, backslash or control character, at most 255 bytes.</summary>
    public static bool IsSegment(string segment)
    {
        if (segment.Length == 0 || segment is "." or ".." || System.Text.Encoding.UTF8.GetByteCount(segment) > 255)
        {
            return false;
        }

        foreach (var c in segment)
        {
            if (char.IsControl(c) || c is '\\' or '/')
            {
                return false;
            }
        }

        return true;
    }
}
