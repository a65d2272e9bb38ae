using System.Runtime.InteropServices;

namespace Peregrine.Tests.Infrastructure;

/// <summary>This process's listening sockets, found among its descriptors (Linux).</summary>
internal static class ListeningSockets
{
    /// <summary>TCP_DEFER_ACCEPT of this process's socket listening on <paramref name="port"/>, found among its descriptors.</summary>
    public static int DeferAcceptSeconds(int port)
    {
        foreach (var entry in Directory.EnumerateFileSystemEntries("/proc/self/fd"))
        {
            if (!int.TryParse(Path.GetFileName(entry), out var fd) || LinkTarget(entry) is not { } target || !target.StartsWith("socket:", StringComparison.Ordinal))
            {
                continue;
            }

            var length = sizeof(int);
            if (getsockopt(fd, SolSocket, SoAcceptConn, out var value, ref length) != 0 || value == 0)
            {
                continue;
            }

            // struct sockaddr_in or sockaddr_in6: the family, then the port in network order.
            var address = new byte[128];
            length = address.Length;
            if (getsockname(fd, address, ref length) != 0 || ((address[2] << 8) | address[3]) != port)
            {
                continue;
            }

            length = sizeof(int);
            Assert.Equal(0, getsockopt(fd, IpProtoTcp, TcpDeferAccept, out value, ref length));
            return value;
        }

        throw new InvalidOperationException($"No socket of this process listens on port {port}.");
    }

    // Other tests open and close descriptors meanwhile: one gone since the listing is skipped.
    private static string? LinkTarget(string entry)
    {
        try
        {
            return new FileInfo(entry).LinkTarget;
        }
        catch (IOException)
        {
            return null;
        }
    }

    private const int SolSocket = 1;
    private const int SoAcceptConn = 30;
    private const int IpProtoTcp = 6;
    private const int TcpDeferAccept = 9;

    [DllImport("libc", SetLastError = true)]
    private static extern int getsockopt(int fd, int level, int name, out int value, ref int length);

    [DllImport("libc", SetLastError = true)]
    private static extern int getsockname(int fd, byte[] address, ref int length);
}
