namespace Peregrine.Tests.Http1.Fuzzing;

/// <summary>
/// Mutations of the bytes on the wire: flips, insertions of the bytes that framing turns on
/// (CR, LF, SP, HTAB, NUL, colon, bytes above 0x7F), deletions, and line ends rewritten. Half of
/// the positions are next to a CR, LF, space or colon, where framing decisions are made.
/// </summary>
internal static class ByteMutations
{
    private static readonly byte[][] s_insertions =
        [[(byte)'\r'], [(byte)'\n'], [(byte)' '], [(byte)'\t'], [0], [(byte)':'], [(byte)'/'], [0x80], [0xFF], [(byte)'\r', (byte)'\n'], [(byte)'\r', (byte)'\n', (byte)' ']];

    private static readonly byte[][] s_lineEnds = [[(byte)'\n'], [(byte)'\r'], [(byte)'\n', (byte)'\r'], [(byte)'\r', (byte)'\r', (byte)'\n'], [(byte)'\r', (byte)'\n', (byte)'\r', (byte)'\n'], [(byte)'\r', 0, (byte)'\n']];

    /// <summary>One mutation of <paramref name="bytes"/>; says what it did.</summary>
    public static string Apply(Random random, ref byte[] bytes)
    {
        if (bytes.Length == 0)
        {
            return "nothing to mutate";
        }

        var at = Position(random, bytes);
        switch (random.Next(6))
        {
            case 0:
                var old = bytes[at];
                bytes[at] = random.Next(2) == 0 ? (byte)(old ^ (1 << random.Next(8))) : (byte)random.Next(256);
                return $"byte {at} 0x{old:X2} -> 0x{bytes[at]:X2}";
            case 1:
            case 2:
                var inserted = s_insertions[random.Next(s_insertions.Length)];
                bytes = [.. bytes.AsSpan(0, at), .. inserted, .. bytes.AsSpan(at)];
                return $"inserted {Hex(inserted)} at {at}";
            case 3:
                var length = Math.Min(random.Next(1, 4), bytes.Length - at);
                bytes = [.. bytes.AsSpan(0, at), .. bytes.AsSpan(at + length)];
                return $"deleted {length} at {at}";
            default:
                return RewriteLineEnd(random, ref bytes);
        }
    }

    private static string RewriteLineEnd(Random random, ref byte[] bytes)
    {
        var ends = new List<int>();
        for (var i = bytes.AsSpan().IndexOf("\r\n"u8); i >= 0; i = bytes.AsSpan(i + 2).IndexOf("\r\n"u8) is var next and >= 0 ? i + 2 + next : -1)
        {
            ends.Add(i);
        }

        if (ends.Count == 0)
        {
            return "no line end to rewrite";
        }

        if (random.Next(8) == 0)
        {
            bytes = [.. System.Text.Encoding.Latin1.GetBytes(System.Text.Encoding.Latin1.GetString(bytes).Replace("\r\n", "\n", StringComparison.Ordinal))];
            return "every CRLF -> LF";
        }

        var at = ends[random.Next(ends.Count)];
        var with = s_lineEnds[random.Next(s_lineEnds.Length)];
        bytes = [.. bytes.AsSpan(0, at), .. with, .. bytes.AsSpan(at + 2)];
        return $"CRLF at {at} -> {Hex(with)}";
    }

    private static int Position(Random random, byte[] bytes)
    {
        var at = random.Next(bytes.Length);
        if (random.Next(2) == 0)
        {
            // The next framing byte from a random point, or the byte just before or after it.
            var next = bytes.AsSpan(at).IndexOfAny("\r\n :"u8);
            if (next >= 0)
            {
                at = Math.Clamp(at + next + random.Next(-1, 2), 0, bytes.Length - 1);
            }
        }

        return at;
    }

    private static string Hex(byte[] bytes) => Convert.ToHexString(bytes);
}
