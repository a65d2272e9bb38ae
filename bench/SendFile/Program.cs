// Is sendfile(2) worth having for files not held in memory? A raw-socket HTTP/1.1 responder
// (no Kestrel, no parsing beyond the blank line) that answers every request with one file, in
// one of two ways:
//
//   copy      pread(2) into one 64 KiB buffer and send(2) it, as Peregrine's disk path does
//             (into Kestrel's pipe memory instead of its own buffer);
//   sendfile  Socket.SendPacketsAsync with the header bytes and a FileStream element, which on
//             Linux issues sendfile(2) (strace: three calls for 10 MB) with no user-space copy.
//
//   dotnet run -c Release --project bench/SendFile -- MODE FILE PORT     (bench/SendFile/run drives it)
using System.Net;
using System.Net.Sockets;
using System.Text;

if (args.Length != 3 || args[0] is not ("copy" or "sendfile"))
{
    Console.Error.WriteLine("usage: Peregrine.SendFileBench copy|sendfile FILE PORT");
    return 2;
}

var (mode, path, port) = (args[0], args[1], int.Parse(args[2]));
var length = new FileInfo(path).Length;
if (length > int.MaxValue)
{
    Console.Error.WriteLine("FILE: at most 2 GiB (one SendPacketsElement)");
    return 2;
}

var head = Encoding.ASCII.GetBytes($"HTTP/1.1 200 OK\r\nContent-Length: {length}\r\nContent-Type: application/octet-stream\r\n\r\n");
using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
listener.Bind(new IPEndPoint(IPAddress.Loopback, port));
listener.Listen(512);
while (true)
{
    var socket = await listener.AcceptAsync();
    socket.NoDelay = true;
    _ = ServeAsync(socket);
}

async Task ServeAsync(Socket socket)
{
    var input = new byte[8192];
    var buffered = 0;
    var buffer = new byte[64 * 1024];
    // SendPacketsElement requires a FileStream opened for asynchronous I/O.
    using var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.Asynchronous);
    using var packets = new SocketAsyncEventArgs();
    using var completed = new SemaphoreSlim(0);
    packets.Completed += (_, _) => completed.Release();
    packets.SendPacketsElements = [new SendPacketsElement(head), new SendPacketsElement(file, 0, (int)length, endOfPacket: true)];
    try
    {
        while (true)
        {
            var read = await socket.ReceiveAsync(input.AsMemory(buffered));
            if (read == 0)
            {
                return;
            }

            buffered += read;
            int end;
            while ((end = input.AsSpan(0, buffered).IndexOf("\r\n\r\n"u8)) >= 0)
            {
                var used = end + 4;
                input.AsSpan(used, buffered - used).CopyTo(input);
                buffered -= used;
                if (mode == "copy")
                {
                    await socket.SendAsync(head);
                    for (long offset = 0; offset < length;)
                    {
                        var n = RandomAccess.Read(file.SafeFileHandle, buffer, offset);
                        await socket.SendAsync(buffer.AsMemory(0, n));
                        offset += n;
                    }
                }
                else
                {
                    if (socket.SendPacketsAsync(packets))
                    {
                        await completed.WaitAsync();
                    }

                    if (packets.SocketError != SocketError.Success)
                    {
                        return;
                    }
                }
            }
        }
    }
    catch (SocketException)
    {
        // The client went away.
    }
    finally
    {
        socket.Dispose();
    }
}
