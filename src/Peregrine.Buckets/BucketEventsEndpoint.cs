using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>
/// Takes S3 event notifications on one path (POST) and asks the bucket source for a sync:
/// 202 when the events concern the site, 204 when none does, 400 for a body that is not an event
/// notification, 413 past <see cref="MaxBody"/>, 405 for another method. Other paths go on.
/// </summary>
/// <remarks>
/// Security limit: the endpoint takes no credentials. Anyone who can reach it can ask for syncs;
/// they are folded into one at a time and each reads the bucket, so the cost is bounded, but it
/// belongs on an address that only the bucket's notifier reaches (docs/deployment.md).
/// </remarks>
internal sealed class BucketEventsEndpoint(RequestDelegate next, BucketSource bucket, PathString path, ILogger logger)
{
    /// <summary>The largest body read: far above what a notification of 1,000 records takes.</summary>
    public const int MaxBody = 1024 * 1024;

    public Task Invoke(HttpContext context)
    {
        if (!context.Request.Path.Equals(path))
        {
            return next(context);
        }

        if (!HttpMethods.IsPost(context.Request.Method))
        {
            context.Response.StatusCode = StatusCodes.Status405MethodNotAllowed;
            context.Response.Headers.Allow = "POST";
            return Task.CompletedTask;
        }

        return TakeAsync(context);
    }

    private async Task TakeAsync(HttpContext context)
    {
        var request = context.Request;
        if (request.ContentLength > MaxBody)
        {
            context.Response.StatusCode = StatusCodes.Status413PayloadTooLarge;
            return;
        }

        var body = new MemoryStream();
        var buffer = new byte[16 * 1024];
        int read;
        while ((read = await request.Body.ReadAsync(buffer, context.RequestAborted)) > 0)
        {
            if (body.Length + read > MaxBody)
            {
                context.Response.StatusCode = StatusCodes.Status413PayloadTooLarge;
                return;
            }

            body.Write(buffer, 0, read);
        }

        if (BucketEvents.Relevant(body.GetBuffer().AsMemory(0, (int)body.Length), bucket.State.Location, out var problem) is not { } relevant)
        {
            context.Response.StatusCode = StatusCodes.Status400BadRequest;
            context.Response.ContentType = "text/plain; charset=utf-8";
            await context.Response.WriteAsync("Not an S3 event notification: " + problem + "\n", context.RequestAborted);
            return;
        }

        if (relevant == 0)
        {
            context.Response.StatusCode = StatusCodes.Status204NoContent;
            return;
        }

        BucketLog.Notified(logger, bucket.State.Location.ToString(), relevant);
        bucket.Notify();
        context.Response.StatusCode = StatusCodes.Status202Accepted;
    }
}
