namespace Peregrine.Bench.Baselines;

/// <summary>
/// The ceiling for any Kestrel-based file server: every request gets the same pre-built body of
/// a given size, with Content-Type and Content-Length, and no lookup of any kind. The harness
/// starts one instance per body size.
/// </summary>
internal static class CeilingMiddleware
{
    public static Func<RequestDelegate, RequestDelegate> Create(int size)
    {
        byte[] body = new byte[size];
        new Random(size).NextBytes(body);

        return _ => context =>
        {
            var response = context.Response;
            response.ContentType = "application/octet-stream";
            response.ContentLength = body.Length;
            return response.Body.WriteAsync(body).AsTask();
        };
    }
}
