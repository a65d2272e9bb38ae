using Microsoft.AspNetCore.StaticFiles;

namespace Peregrine.Bench.Baselines;

/// <summary>
/// The design Peregrine grew from, reimplemented minimally: every file loaded into a dictionary
/// keyed by request path at start-up; a request sets Content-Type and Content-Length and writes
/// the bytes. No ETag, no conditional requests, no ranges, no content negotiation.
/// </summary>
internal static class SeedMiddleware
{
    public static Func<RequestDelegate, RequestDelegate> Create(string root)
    {
        var types = new FileExtensionContentTypeProvider();
        var files = new Dictionary<string, (byte[] Body, string ContentType)>(StringComparer.Ordinal);
        foreach (string path in Directory.EnumerateFiles(root, "*", SearchOption.AllDirectories))
        {
            string key = "/" + Path.GetRelativePath(root, path).Replace(Path.DirectorySeparatorChar, '/');
            string contentType = types.TryGetContentType(path, out string? t) ? t : "application/octet-stream";
            files[key] = (File.ReadAllBytes(path), contentType);
        }

        return next => context =>
        {
            if (!files.TryGetValue(context.Request.Path.Value ?? "", out var file))
            {
                return next(context);
            }

            var response = context.Response;
            response.ContentType = file.ContentType;
            response.ContentLength = file.Body.Length;
            return response.Body.WriteAsync(file.Body).AsTask();
        };
    }
}
