namespace Peregrine.Tests.Live;

/// <summary>This process's threads as the kernel lists them (<c>/proc/self/task</c>), found by name.</summary>
internal static class OwnThreads
{
    /// <summary>
    /// The ids of the threads named <paramref name="comm"/>: the kernel keeps a thread's first
    /// 15 bytes of name ("Peregrine watcher" is "Peregrine watch").
    /// </summary>
    public static List<string> Named(string comm)
    {
        List<string> ids = [];
        foreach (var task in Directory.EnumerateDirectories("/proc/self/task"))
        {
            var thread = Path.GetFileName(task);
            if (Read(thread, "comm")?.TrimEnd('\n') == comm)
            {
                ids.Add(thread);
            }
        }

        return ids;
    }

    /// <summary>One of a thread's files under <c>/proc/self/task/ID</c>, or null once the thread has ended.</summary>
    public static string? Read(string thread, string file)
    {
        try
        {
            return File.ReadAllText($"/proc/self/task/{thread}/{file}");
        }
        catch (IOException)
        {
            // The thread ended meanwhile.
            return null;
        }
    }
}
