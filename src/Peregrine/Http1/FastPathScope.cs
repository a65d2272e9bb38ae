using Peregrine.Instances;

namespace Peregrine.Http1;

/// <summary>
/// Which requests the fast path may answer in an application, decided once from where its
/// Peregrine instances are mounted, so that it answers exactly as the pipeline would or hands
/// the request on. It serves the unnamed instance only, and only when that instance is mounted
/// with <c>UsePeregrine()</c> at the site root and has no <see cref="PeregrineOptions.OnPrepareResponse"/>.
/// Paths under any other mount (another instance's <c>RequestPath</c>, or the literal start of
/// a <c>MapPeregrine</c> pattern, whose endpoint may carry authorization, CORS or rate limiting)
/// are handed on; and if another instance also answers at the site root, the pipeline's order
/// decides which answers first, so the fast path answers nothing. Nor does it when any instance
/// is used on a branch of the pipeline (<c>app.Map("/static", b => b.UsePeregrine())</c>): the
/// branch's path and predicate are not known to the instance, and the middleware there serves
/// <c>/static/x</c> from the root's <c>x</c> while <c>/x</c> goes elsewhere.
/// </summary>
/// <param name="Serves">Whether the fast path answers any request.</param>
/// <param name="HandOffPrefixes">Paths (and everything under them) always handed to the pipeline.</param>
internal readonly record struct FastPathScope(bool Serves, string[] HandOffPrefixes)
{
    /// <summary>Everything handed on.</summary>
    public static FastPathScope None => new(false, []);

    public static FastPathScope Of(PeregrineInstances? instances, PeregrineOptions options)
    {
        // Under a mount point every request goes the middleware's way: the fast path serves the
        // root's paths only. (Misses, and so SPA fallbacks, are always handed off.)
        if (instances is null || !string.IsNullOrEmpty(options.RequestPath.Value) || options.OnPrepareResponse is not null)
        {
            return None;
        }

        var served = false;
        var prefixes = new List<string>();
        foreach (var mount in instances.Mounts())
        {
            if (mount.InBranch)
            {
                return None;
            }

            if (mount.Name.Length == 0 && !mount.IsEndpoint && mount.Prefix.Length == 0)
            {
                served = true;
            }
            else if (mount.Prefix.Length == 0)
            {
                return None;
            }
            else
            {
                prefixes.Add(mount.Prefix);
            }
        }

        return served ? new FastPathScope(true, [.. prefixes]) : None;
    }

    /// <summary>True when <paramref name="path"/> is one of <see cref="HandOffPrefixes"/> or lies under one, compared as <c>PathString.StartsWithSegments</c> does.</summary>
    public bool HandsOff(ReadOnlySpan<char> path)
    {
        foreach (var prefix in HandOffPrefixes)
        {
            if (path.StartsWith(prefix, StringComparison.OrdinalIgnoreCase) && (path.Length == prefix.Length || path[prefix.Length] == '/'))
            {
                return true;
            }
        }

        return false;
    }
}
