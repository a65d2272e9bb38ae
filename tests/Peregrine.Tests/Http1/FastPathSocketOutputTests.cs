using System.Net.Sockets;
using System.Text;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Win32.SafeHandles;
using Peregrine.Http1;
using Peregrine.Interop;
using Peregrine.Live;
using Peregrine.Tests.Infrastructure;
using Peregrine.Tests.Platform;

namespace Peregrine.Tests.Http1;

/// <summary>
/// Over cleartext the fast path writes to the socket itself (Http1/SocketOutput): heads and
/// small bodies from a buffer, bodies of 16 KiB or more from a sealed memory file by sendfile(2).
/// Whatever the mix, every response must arrive whole and in order, and a request handed to
/// Kestrel after them must be answered after the last of them.
/// </summary>
public sealed class FastPathSocketOutputTests
{
    // Around the threshold, one body far larger than a socket buffer, and an empty one.
    private static readonly int[] Sizes = [0, 100, SocketOutput.DirectBodyMinimum - 1, SocketOutput.DirectBodyMinimum, SocketOutput.DirectBodyMinimum + 1, 70_000, 750_000];

    [Fact]
    public async Task PipelinedResponsesOfEverySize_ArriveWholeAndInOrder_ThenKestrelAnswersAfterThem()
    {
        using var tree = new TempTree();
        var files = Sizes.ToDictionary(size => $"/f{size}.bin", size => Pattern(size, seed: size));
        foreach (var (path, bytes) in files)
        {
            tree.Write(path[1..], bytes);
        }

        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.Watch.Enabled = false, fastPath: true);
        var etag = (await RawHttp.SendAsync(host.Address, "/f70000.bin")).Headers.Split("\r\n").Single(h => h.StartsWith("ETag: ", StringComparison.Ordinal))[6..];

        // A fixed shuffle of GETs, HEADs, single byte ranges (sent from an offset, by sendfile
        // too) and a 304, then a range under If-Match (Kestrel's, lent to it), then a GET the
        // fast path answers again.
        var random = new Random(7);
        var expected = new List<(int Status, byte[] Body)>();
        var request = new StringBuilder();
        for (var i = 0; i < 60; i++)
        {
            var path = files.Keys.ElementAt(random.Next(files.Count));
            switch (random.Next(7))
            {
                case 2 when files[path].Length != 0:
                    var first = random.Next(files[path].Length);
                    var last = Math.Min(files[path].Length - 1, first + random.Next(2) * random.Next(files[path].Length));
                    request.Append($"GET {path} HTTP/1.1\r\nHost: x\r\nRange: bytes={first}-{last}\r\n\r\n");
                    expected.Add((206, files[path][first..(last + 1)]));
                    break;
                case 0:
                    request.Append($"HEAD {path} HTTP/1.1\r\nHost: x\r\n\r\n");
                    expected.Add((200, []));
                    break;
                case 1:
                    request.Append($"GET /f70000.bin HTTP/1.1\r\nHost: x\r\nIf-None-Match: {etag}\r\n\r\n");
                    expected.Add((304, []));
                    break;
                default:
                    request.Append($"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
                    expected.Add((200, files[path]));
                    break;
            }
        }

        foreach (var (path, first, last) in new[] { ("/f750000.bin", 100_000, 399_999), ("/f70000.bin", 50_000, 69_999), ("/f750000.bin", 749_999, 749_999) })
        {
            request.Append($"GET {path} HTTP/1.1\r\nHost: x\r\nRange: bytes={first}-{last}\r\n\r\n");
            expected.Add((206, files[path][first..(last + 1)]));
        }

        request.Append("GET /f70000.bin HTTP/1.1\r\nHost: x\r\nIf-Match: *\r\nRange: bytes=10-19\r\n\r\n");
        expected.Add((206, files["/f70000.bin"][10..20]));
        request.Append("GET /f750000.bin HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        expected.Add((200, files["/f750000.bin"]));

        using var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes(request.ToString()));
        using var all = new MemoryStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(60));
        await stream.CopyToAsync(all, timeout.Token);

        var text = all.ToArray();
        var at = 0;
        for (var i = 0; i < expected.Count; i++)
        {
            var end = text.AsSpan(at).IndexOf("\r\n\r\n"u8);
            Assert.True(end > 0, $"response {i}: no head");
            var head = Encoding.ASCII.GetString(text, at, end);
            Assert.StartsWith($"HTTP/1.1 {expected[i].Status} ", head);
            at += end + 4;
            var body = expected[i].Body;
            Assert.True(text.AsSpan(at, body.Length).SequenceEqual(body), $"response {i}: body");
            at += body.Length;
        }

        Assert.Equal(text.Length, at);
    }

    [NativeFact("memory files (memfd_create)")]
    public async Task ALargeBodyOverCleartext_IsSentFromASealedCopy_ASmallOneIsNot()
    {
        // Copies of hosts already disposed by other tests are closed by their finalizers: let
        // them go, so that the process-wide limit on copies has room for this one.
        GC.Collect();
        GC.WaitForPendingFinalizers();
        using var tree = new TempTree();
        var large = Pattern(100_000, seed: 1);
        tree.Write("large.bin", large);
        tree.Write("small.bin", Pattern(1000, seed: 2));
        await using var host = await PeregrineHost.StartAsync(tree.Root, options => options.Watch.Enabled = false, fastPath: true);

        Assert.Equal(large, (await RawHttp.SendAsync(host.Address, "/large.bin")).Body);
        await RawHttp.SendAsync(host.Address, "/small.bin");

        var snapshot = host.Services.GetRequiredService<FileCatalog>().Current!;
        Assert.True(snapshot.TryFind("/large.bin", out var largeEntry));
        Assert.True(snapshot.TryFind("/small.bin", out var smallEntry));
        Assert.True(((ResponseBlocks)largeEntry.Identity.SenderState!).HasSealedCopy);
        Assert.False(((ResponseBlocks)smallEntry.Identity.SenderState!).HasSealedCopy);
    }

    [NativeFact("memory files (memfd_create)")]
    public void ASealedCopy_HoldsTheBytes_AndCannotBeWrittenOrResized()
    {
        var bytes = Pattern(50_000, seed: 3);
        using var sealedCopy = FileBody.TryCreate(bytes);
        Assert.NotNull(sealedCopy);
        Assert.Equal(bytes.Length, sealedCopy.Length);

        // The same file opened again, as another process could through /proc.
        var path = $"/proc/self/fd/{sealedCopy.DangerousGetHandle()}";
        Assert.Equal(bytes, File.ReadAllBytes(path));
        using (var writer = File.OpenHandle(path, FileMode.Open, FileAccess.Write))
        {
            Assert.Throws<UnauthorizedAccessException>(() => RandomAccess.Write(writer, new byte[] { 1 }, fileOffset: 0));
            Assert.Throws<UnauthorizedAccessException>(() => RandomAccess.SetLength(writer, 10));
        }

        Assert.Equal(bytes, File.ReadAllBytes(path));
    }

    [NativeFact("unnamed files (O_TMPFILE) and cachestat(2)")]
    public void ALargeCopy_HoldsTheBytes_AndIsSealedOrUnnamedAndReadOnly()
    {
        var bytes = Pattern(FileBody.PageCacheMinimum + 70_000, seed: 4);
        using var copy = FileBody.TryCreate(bytes);
        Assert.NotNull(copy);
        Assert.Equal(bytes.Length, copy.Length);
        var fd = (int)copy.DangerousGetHandle();
        Assert.Equal(bytes, File.ReadAllBytes($"/proc/self/fd/{fd}"));

        // Where the temporary folder is a disk's, the copy is in its page cache; on tmpfs it is
        // a sealed memory file, as smaller bodies are everywhere.
        Assert.Equal(TemporaryFolderIsTmpfs(), copy.InMemory);
        if (copy.InMemory)
        {
            Assert.Equal(Libc.SealAll, Libc.fcntl(fd, GetSeals, 0));
            return;
        }

        // The descriptor held cannot write, the file has no name and no write permission, and
        // its pages, just written, are resident.
        Assert.Equal(Libc.OpenReadOnly, Libc.fcntl(fd, Libc.GetStatusFlags, 0) & AccessModeMask);

        var status = new FileInfo($"/proc/self/fd/{fd}");
        Assert.True(OperatingSystem.IsLinux());
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal(UnixFileMode.UserRead, File.GetUnixFileMode(status.FullName));
        }

        Assert.EndsWith("(deleted)", status.LinkTarget);
        Assert.True(copy.IsResident());
        Assert.Equal(bytes, File.ReadAllBytes($"/proc/self/fd/{fd}"));
    }

    [NativeFact("unnamed files (O_TMPFILE) and cachestat(2)")]
    public async Task ACopyWhosePagesLeftTheCache_ReadsAsNotResident_OnceTheLastAnswerIsOld_AndAsResidentWhenReadBack()
    {
        if (TemporaryFolderIsTmpfs())
        {
            return;
        }

        using var copy = UnnamedCopy(seed: 6, out _);
        Assert.True(copy.IsResident());

        // A yes is taken on trust for a while, so that each send does not ask the kernel; once
        // it is older than that, the pages' eviction is seen.
        PageCache.Evict($"/proc/self/fd/{(int)copy.DangerousGetHandle()}");
        await Task.Delay(FileBody.ResidencyTrustMilliseconds + 50);
        Assert.False(copy.IsResident());

        await copy.WarmAsync();
        Assert.True(copy.IsResident());
    }

    [NativeFact("unnamed files (O_TMPFILE) and cachestat(2)")]
    public async Task ACopyWhosePagesLeftTheCache_IsWrittenAgainFromTheBytesInMemory_AndStaysReadOnly()
    {
        if (TemporaryFolderIsTmpfs())
        {
            return;
        }

        using var copy = UnnamedCopy(seed: 7, out var bytes);
        var fd = (int)copy.DangerousGetHandle();
        var path = $"/proc/self/fd/{fd}";
        PageCache.Evict(path);
        var made = WriteTime(path);
        await Task.Delay(50);

        await copy.RefillAsync(bytes);

        // Written, not read back: the file's time moved (a read leaves it), and every page is
        // cached. The same bytes, the mode 0400 again, and the descriptor held still read-only.
        Assert.True(WriteTime(path) > made, "the copy was written again");
        Assert.True(copy.IsResident());
        Assert.Equal(bytes, File.ReadAllBytes(path));
        Assert.True(OperatingSystem.IsLinux());
        if (OperatingSystem.IsLinux())
        {
            Assert.Equal(UnixFileMode.UserRead, File.GetUnixFileMode(path));
        }

        Assert.Equal(Libc.OpenReadOnly, Libc.fcntl(fd, Libc.GetStatusFlags, 0) & AccessModeMask);
    }

    // A large body's copy, in an unnamed file where the temporary folder is a disk's.
    private static FileBody UnnamedCopy(int seed, out byte[] bytes)
    {
        bytes = Pattern(FileBody.PageCacheMinimum + 70_000, seed);
        var copy = FileBody.TryCreate(bytes);
        Assert.NotNull(copy);
        Assert.False(copy.InMemory);
        return copy;
    }

    // The file's own time (fstat(2) of a new descriptor): File.GetLastWriteTimeUtc of a /proc
    // link would give the link's.
    private static DateTime WriteTime(string path)
    {
        using var handle = File.OpenHandle(path);
        return File.GetLastWriteTimeUtc(handle);
    }

    private const int GetSeals = 1034;
    private const int AccessModeMask = 3;

    // statfs(2)'s f_type, by the name .NET gives it.
    private static bool TemporaryFolderIsTmpfs() => new DriveInfo(Path.GetTempPath()).DriveFormat == "tmpfs";

    [NativeFact("sendmsg(2) on a bare descriptor")]
    public async Task BodiesFromMemory_GoGatheredWithTheirHeads_AndArriveWholeWhenTheSocketTakesPartOfThem()
    {
        // Bodies with no sealed copy go from their arrays, gathered with the buffers around them
        // into one sendmsg(2). A small send buffer makes the socket take part of a gather at a
        // time, ending anywhere: inside a head, inside a body, or at a boundary.
        using var listener = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        listener.Bind(new System.Net.IPEndPoint(System.Net.IPAddress.Loopback, 0));
        listener.Listen();
        using var sender = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp) { SendBufferSize = 4096 };
        await sender.ConnectAsync(listener.LocalEndPoint!);
        using var receiver = await listener.AcceptAsync();
        receiver.ReceiveBufferSize = 4096;
        sender.Blocking = false;

        var output = new SocketOutput((int)sender.Handle);
        var expected = new MemoryStream();
        var random = new Random(11);
        for (var i = 0; i < 7; i++)
        {
            var head = Encoding.ASCII.GetBytes($"HTTP/1.1 200 OK\r\nContent-Length: {i}\r\n\r\n");
            output.Append(head);
            expected.Write(head);

            // Bodies around the send buffer's size and well past it, and pairs with no buffer
            // between them.
            var body = Pattern(random.Next(1, 3 * 65_536), seed: 20 + i);
            output.WriteBody(body, file: null);
            expected.Write(body);
            if (i % 3 == 0)
            {
                var next = Pattern(random.Next(1, 9_000), seed: 40 + i);
                output.WriteBody(next, file: null);
                expected.Write(next);
            }
        }

        using var received = new MemoryStream();
        var buffer = new byte[1500];
        var rounds = 0;
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        while (true)
        {
            var progress = output.SendWithoutWaiting();
            Assert.NotEqual(SocketOutput.Progress.Failed, progress);
            rounds++;
            if (progress == SocketOutput.Progress.Done)
            {
                break;
            }

            // Take a little at a time, so that the next send again finds room for part only.
            received.Write(buffer, 0, await receiver.ReceiveAsync(buffer, timeout.Token));
        }

        sender.Shutdown(SocketShutdown.Send);
        int read;
        while ((read = await receiver.ReceiveAsync(buffer, timeout.Token)) > 0)
        {
            received.Write(buffer, 0, read);
        }

        Assert.True(rounds > 10, $"the socket took everything in {rounds} sends; the test needs partial ones");
        Assert.Equal(expected.Length, received.Length);
        Assert.True(expected.ToArray().AsSpan().SequenceEqual(received.ToArray()), "the bytes differ");
        output.Complete();
    }

    [NativeFact("cachestat(2) and private copies")]
    public async Task AFileOnDisk_GoesBySendfileFromItsPrivateCopy_AndWhenNotCachedAfterItsPagesAreReadBack()
    {
        // Larger than MaxCachedFileSize: streamed from disk, from this process's copy.
        using var tree = new TempTree();
        var large = Pattern(3_000_000, seed: 4);
        tree.Write("large.bin", large);
        var recorder = new HandOffRecorder();
        await using var host = await PeregrineHost.StartAsync(tree.Root, fastPath: true, behindFastPath: recorder.Install);
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        Assert.True(catalog.Current!.TryFind("/large.bin", out var entry));
        Assert.Null(entry.Identity.Content);
        Assert.True(catalog.HoldsCopy(entry.Identity.PhysicalPath), "the file is streamed from a private copy");

        // Read once, so that the copy's pages are cached; then kept by the fast path.
        await RawHttp.SendAsync(host.Address, "/large.bin");
        var (status, body, handedOff) = await GetAsync(host, recorder, "/large.bin");
        Assert.Equal(200, status);
        Assert.Equal(large, body);
        Assert.False(handedOff);
        Assert.True(((ResponseBlocks)entry.Identity.SenderState!).HasDiskCopy);

        // Pages dropped from the cache: sendfile would read the disk with the connection's
        // thread. The connection waits while the pages are read back off it, and the fast path
        // answers: on a connection kept alive, every request after it is the fast path's too,
        // which a hand-off to Kestrel would have taken for the connection's life.
        PageCache.Evict(entry.Identity.PhysicalPath!);
        await Task.Delay(FileBody.ResidencyTrustMilliseconds + 50); // the last yes no longer trusted
        var responses = await GetKeptAliveAsync(host, recorder, "/large.bin", "/large.bin");
        Assert.All(responses.Bodies, answered => Assert.Equal(large, answered));
        Assert.Equal([200, 200], responses.Statuses);
        Assert.False(responses.HandedOff);
    }

    [NativeFact("cachestat(2) and private copies")]
    public async Task AByteRangeOfAFileOnDisk_GoesBySendfileFromItsPrivateCopy_FromItsOffset()
    {
        using var tree = new TempTree();
        var large = Pattern(3_000_000, seed: 5);
        tree.Write("large.bin", large);
        var recorder = new HandOffRecorder();
        await using var host = await PeregrineHost.StartAsync(tree.Root, fastPath: true, behindFastPath: recorder.Install);
        var catalog = host.Services.GetRequiredService<FileCatalog>();
        Assert.True(catalog.Current!.TryFind("/large.bin", out var entry));
        Assert.True(catalog.HoldsCopy(entry.Identity.PhysicalPath), "the file is streamed from a private copy");
        await RawHttp.SendAsync(host.Address, "/large.bin");

        foreach (var (range, first, last) in new[] { ("1000000-2999999", 1_000_000, 2_999_999), ("-10", 2_999_990, 2_999_999), ("7-7", 7, 7), ("2500000-", 2_500_000, 2_999_999) })
        {
            var (status, body, handedOff) = await GetAsync(host, recorder, "/large.bin", $"Range: bytes={range}\r\n");
            Assert.Equal(206, status);
            Assert.Equal(large[first..(last + 1)], body);
            Assert.False(handedOff);
        }
    }

    private static async Task<(int Status, byte[] Body, bool HandedOff)> GetAsync(PeregrineHost host, HandOffRecorder recorder, string path, string fields = "")
    {
        using var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var port = ((System.Net.IPEndPoint)client.Client.LocalEndPoint!).Port;
        var stream = client.GetStream();
        await stream.WriteAsync(Encoding.ASCII.GetBytes($"GET {path} HTTP/1.1\r\nHost: x\r\n{fields}Connection: close\r\n\r\n"));
        using var all = new MemoryStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        await stream.CopyToAsync(all, timeout.Token);
        var text = all.ToArray();
        var end = text.AsSpan().IndexOf("\r\n\r\n"u8);
        var status = int.Parse(Encoding.ASCII.GetString(text, 9, 3));
        return (status, text[(end + 4)..], recorder.TakeHandedOff(port));
    }

    /// <summary>The paths asked for one after another on one connection, each once the last response has come whole; the last request closes it.</summary>
    private static async Task<(int[] Statuses, byte[][] Bodies, bool HandedOff)> GetKeptAliveAsync(PeregrineHost host, HandOffRecorder recorder, params string[] paths)
    {
        using var client = new TcpClient();
        await client.ConnectAsync(host.Address.Host, host.Address.Port);
        var port = ((System.Net.IPEndPoint)client.Client.LocalEndPoint!).Port;
        var stream = client.GetStream();
        using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(30));
        var statuses = new List<int>();
        var bodies = new List<byte[]>();
        using var received = new MemoryStream();
        var buffer = new byte[64 * 1024];
        for (var i = 0; i < paths.Length; i++)
        {
            var close = i == paths.Length - 1 ? "Connection: close\r\n" : "";
            await stream.WriteAsync(Encoding.ASCII.GetBytes($"GET {paths[i]} HTTP/1.1\r\nHost: x\r\n{close}\r\n"), timeout.Token);
            received.SetLength(0);
            int end;
            long length;
            while (true)
            {
                var bytes = received.GetBuffer().AsSpan(0, (int)received.Length);
                end = bytes.IndexOf("\r\n\r\n"u8);
                if (end >= 0)
                {
                    var head = Encoding.ASCII.GetString(bytes[..end]);
                    var at = head.IndexOf("Content-Length: ", StringComparison.OrdinalIgnoreCase);
                    Assert.True(at >= 0, head);
                    length = long.Parse(head[(at + 16)..].Split("\r\n")[0]);
                    if (received.Length >= end + 4 + length)
                    {
                        break;
                    }
                }

                var read = await stream.ReadAsync(buffer, timeout.Token);
                Assert.NotEqual(0, read);
                received.Write(buffer, 0, read);
            }

            var all = received.ToArray();
            Assert.Equal(end + 4 + length, all.Length);
            statuses.Add(int.Parse(Encoding.ASCII.GetString(all, 9, 3)));
            bodies.Add(all[(end + 4)..]);
        }

        return (statuses.ToArray(), bodies.ToArray(), recorder.TakeHandedOff(port));
    }

    private static byte[] Pattern(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }
}
