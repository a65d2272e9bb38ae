using System.Buffers;

namespace Peregrine.Http1;

/// <summary>The buffer an output of this folder writes into, rented from the shared pool.</summary>
internal static class FilledBuffer
{
    /// <summary>
    /// Closes the buffer being written into, <paramref name="current"/> with
    /// <paramref name="written"/> bytes in it: returns it when it holds any, for the caller's list
    /// of what to send, and otherwise gives it back to the pool and returns null. Either way the
    /// caller has no buffer open after.
    /// </summary>
    public static byte[]? Close(ref byte[]? current, ref int written, out int length)
    {
        var filled = current;
        length = written;
        current = null;
        written = 0;
        if (filled is not null && length == 0)
        {
            ArrayPool<byte>.Shared.Return(filled);
            return null;
        }

        return filled;
    }
}
