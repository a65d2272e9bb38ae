namespace Peregrine.Server.Configuration;

/// <summary>
/// The options that name a file under ROOT must name one that is there at start-up:
/// <c>--spa</c>, whose missing shell would turn every route into a 404, and <c>--404</c> when
/// given (the default <c>404.html</c> is used only when the root has one), whose missing page
/// would quietly become the built-in one. The other options that name a file (<c>--config</c>,
/// the certificates, <c>--basic-auth-file</c>) are read at start-up, which reports a missing one.
/// </summary>
/// <remarks>
/// Checked once, on the values in force and for a folder ROOT only: a bucket's files are not
/// there before its first copy. A file removed later is the watcher's business, as any file is.
/// </remarks>
internal static class RootFiles
{
    public static void Check(ServerSettings settings, List<string> errors)
    {
        if (settings.Spa is { } spa)
        {
            Check(settings, OptionTable.Spa, spa, errors);
        }

        if (settings.NotFoundPage is { } notFound)
        {
            Check(settings, OptionTable.NotFound, notFound, errors);
        }
    }

    private static void Check(ServerSettings settings, OptionSpec option, string file, List<string> errors)
    {
        // The value has passed the library's rule (a relative path with no dot segments), so it
        // stays under the root.
        var path = Path.Combine(settings.Root, file);
        if (!File.Exists(path))
        {
            var what = Directory.Exists(path) ? "is a folder, not a file," : "does not exist";
            errors.Add($"{settings.Describe(option)}: '{file}' {what} under ROOT ({Path.GetFullPath(settings.Root)}).");
        }
    }
}
