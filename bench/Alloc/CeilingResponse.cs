// The "ceiling" of the allocation benches: the same bytes a file would get, with only
// Content-Type and Content-Length set, and no lookup; what Kestrel itself allocates for a response.
static class CeilingResponse
{
    public static Task Write(HttpContext context, byte[] body, string contentType)
    {
        context.Response.ContentType = contentType;
        context.Response.ContentLength = body.Length;
        if (HttpMethods.IsHead(context.Request.Method))
        {
            return Task.CompletedTask;
        }

        var write = context.Response.BodyWriter.WriteAsync(body);
        return write.IsCompletedSuccessfully ? Task.CompletedTask : write.AsTask();
    }
}
