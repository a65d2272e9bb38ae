using System.Runtime.InteropServices;
using Peregrine.Interop;

namespace Peregrine.Tests.Infrastructure;

/// <summary>A file's pages in the page cache, dropped and asked after apart from the server's own calls (Linux).</summary>
public static class PageCache
{
    /// <summary>
    /// posix_fadvise(POSIX_FADV_DONTNEED) after fsync(2), until not every page of the file is
    /// cached: a page a socket still holds (sent by sendfile and not yet acknowledged) is not
    /// dropped, so the advice is given again for up to 5 s.
    /// </summary>
    public static void Evict(string path)
    {
        var deadline = Environment.TickCount64 + 5_000;
        while (true)
        {
            // Written back first: dirty pages are not dropped.
            using (var handle = File.OpenHandle(path))
            {
                Assert.Equal(0, fsync((int)handle.DangerousGetHandle()));
                Assert.Equal(0, Libc.posix_fadvise((int)handle.DangerousGetHandle(), 0, 0, Libc.AdviseDontNeed));
            }

            if (!Holds(path))
            {
                return;
            }

            Assert.True(Environment.TickCount64 < deadline, $"{path} stayed in the page cache ({Describe(path)})");
            Thread.Sleep(10);
        }
    }

    /// <summary>Whether every page of the file is in the page cache (cachestat(2), Linux 6.5).</summary>
    public static bool Holds(string path)
    {
        using var handle = File.OpenHandle(path);
        var range = new Libc.CachestatRange { Length = (ulong)RandomAccess.GetLength(handle) };
        Assert.Equal(0, cachestat(451, (int)handle.DangerousGetHandle(), ref range, out var stat, 0));
        return stat.Cached * (ulong)Environment.SystemPageSize >= range.Length;
    }

    private static string Describe(string path)
    {
        using var handle = File.OpenHandle(path);
        var range = new Libc.CachestatRange { Length = (ulong)RandomAccess.GetLength(handle) };
        cachestat(451, (int)handle.DangerousGetHandle(), ref range, out var stat, 0);
        return $"{range.Length} bytes; pages cached {stat.Cached}, dirty {stat.Dirty}, under writeback {stat.Writeback}";
    }

    [DllImport("libc")]
    private static extern int fsync(int fd);

    [DllImport("libc", EntryPoint = "syscall")]
    private static extern int cachestat(nint number, int fd, ref Libc.CachestatRange range, out Libc.Cachestat stat, uint flags);
}
