using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Peregrine;
using Peregrine.Instances;
using Peregrine.Sources.Bucket;

// Beside UsePeregrine, as the other endpoints are: an application that can call one can call this.
namespace Microsoft.AspNetCore.Builder;

/// <summary>Endpoints of an instance that serves a bucket (<see cref="PeregrineOptions.Bucket"/>).</summary>
public static class PeregrineBucketExtensions
{
    /// <summary>
    /// Takes S3 event notifications (the JSON that S3, Ceph RGW and MinIO post, with a
    /// <c>Records</c> array) by POST on <paramref name="path"/>, and syncs the bucket at once
    /// rather than at the next poll: 202 when the events concern the site, 204 when none does,
    /// 400 for a body that is not an event notification. Other requests go on. The endpoint takes
    /// no credentials; put it where only the bucket's notifier can reach it.
    /// </summary>
    /// <param name="app">The application.</param>
    /// <param name="path">The path, such as <c>/_peregrine/bucket-events</c>.</param>
    /// <param name="instance">The instance's name given to <c>AddPeregrine</c>; null for the unnamed one.</param>
    public static IApplicationBuilder UsePeregrineBucketEvents(this IApplicationBuilder app, PathString path, string? instance = null)
    {
        ArgumentNullException.ThrowIfNull(app);
        if (!path.HasValue || path.Value!.Length < 2)
        {
            throw new ArgumentException("The path must start with '/' and name something, such as /_peregrine/bucket-events.", nameof(path));
        }

        instance ??= "";
        var caller = $"app.{nameof(UsePeregrineBucketEvents)}()";
        _ = PeregrineInstances.Resolve(app.ApplicationServices, instance, caller);
        var bucket = PeregrineInstances.SourceOf(app.ApplicationServices, instance).Copied as BucketSource
            ?? throw new InvalidOperationException($"{caller}: the Peregrine instance serves a folder; set PeregrineOptions.Bucket to serve a bucket.");
        var logger = app.ApplicationServices.GetRequiredService<ILoggerFactory>().CreateLogger("Peregrine.Bucket");
        return app.Use(next => new BucketEventsEndpoint(next, bucket, path, logger).Invoke);
    }
}
