using Microsoft.Extensions.DependencyInjection.Extensions;
using Peregrine.Sources;
using Peregrine.Sources.Bucket;

// Beside AddPeregrine, as the core's registration is: an application finds it without a using line.
namespace Microsoft.Extensions.DependencyInjection;

/// <summary>Registration of the bucket source, from the Peregrine.AspNetCore.Buckets package.</summary>
public static class PeregrineBucketServiceCollectionExtensions
{
    /// <summary>
    /// Lets every Peregrine instance of the application serve a bucket: one whose options set
    /// <c>PeregrineOptions.Bucket</c> (in code, or a <c>Bucket</c> section bound by
    /// <c>AddPeregrine(IConfiguration)</c>) copies it and serves the copy. It adds no instance and
    /// changes nothing an instance serves otherwise; without it, an instance that names a bucket
    /// fails validation at start and says to call this. Safe to call more than once, before or
    /// after <c>AddPeregrine</c>. See docs/deployment.md, "Serving from a bucket".
    /// </summary>
    public static IServiceCollection AddPeregrineBuckets(this IServiceCollection services)
    {
        ArgumentNullException.ThrowIfNull(services);
        services.TryAddSingleton<IBucketSourceFactory, BucketSourceFactory>();
        return services;
    }
}
