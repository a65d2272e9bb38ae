using System.Net.Sockets;
using System.Text;

namespace Peregrine.Server.Hosting;

/// <summary>
/// The service manager's readiness protocol (<c>sd_notify(3)</c>), without libsystemd: under a
/// unit with <c>Type=notify</c>, systemd puts a datagram socket's path in <c>NOTIFY_SOCKET</c>
/// and waits for <c>READY=1</c> on it before it counts the service as started. Elsewhere the
/// variable is unset and every call does nothing.
/// </summary>
internal static class SystemdNotify
{
    /// <summary>Sends <paramref name="state"/> (<c>READY=1</c>, <c>STOPPING=1</c>) if a service manager asked for it.</summary>
    /// <returns>False when no service manager listens or the datagram could not be sent.</returns>
    public static bool Send(string state)
    {
        var path = Environment.GetEnvironmentVariable("NOTIFY_SOCKET");
        if (string.IsNullOrEmpty(path) || (path[0] != '/' && path[0] != '@'))
        {
            // Unset, or a vsock address (vsock:CID:PORT), which a server on this host never gets.
            return false;
        }

        // '@' names a socket in the abstract namespace, written with a leading NUL.
        var endPoint = new UnixDomainSocketEndPoint(path[0] == '@' ? "\0" + path[1..] : path);
        try
        {
            using var socket = new Socket(AddressFamily.Unix, SocketType.Dgram, ProtocolType.Unspecified);
            socket.SendTo(Encoding.UTF8.GetBytes(state), endPoint);
            return true;
        }
        catch (SocketException)
        {
            return false;
        }
    }
}
