namespace Peregrine.Tests.Infrastructure;

public static class RepositoryRoot
{
    /// <summary>The checkout's top folder: the nearest parent of the test binary holding Peregrine.slnx.</summary>
    public static string Path { get; } = Find();

    private static string Find()
    {
        for (var directory = new DirectoryInfo(AppContext.BaseDirectory); directory is not null; directory = directory.Parent)
        {
            if (File.Exists(System.IO.Path.Combine(directory.FullName, "Peregrine.slnx")))
            {
                return directory.FullName;
            }
        }

        throw new InvalidOperationException("Peregrine.slnx not found above " + AppContext.BaseDirectory);
    }
}
