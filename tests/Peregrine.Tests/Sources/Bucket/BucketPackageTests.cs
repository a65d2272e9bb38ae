using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Options;
using Peregrine.Sources;
using Peregrine.Tests.Infrastructure;

namespace Peregrine.Tests.Sources.Bucket;

/// <summary>
/// The bucket source comes from its own package (docs/architecture.md, "Packages"): an instance
/// that names a bucket without <c>AddPeregrineBuckets()</c> stops at validation with the fix
/// named, and with it the bucket's own rules apply. No store is reached.
/// </summary>
public sealed class BucketPackageTests
{
    [Fact]
    public void Bucket_WithoutTheBucketPackage_FailsValidationNamingIt()
    {
        using var services = Services(addBuckets: false);

        var error = Assert.Throws<OptionsValidationException>(() => services.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(Options.DefaultName));

        Assert.Equal([IBucketSourceFactory.NotAdded], error.Failures);
        Assert.Contains("services.AddPeregrineBuckets()", IBucketSourceFactory.NotAdded);
    }

    [Fact]
    public void Bucket_WithTheBucketPackage_IsCheckedByItsRules()
    {
        using var services = Services(addBuckets: true, pointer: "a/b");

        var error = Assert.Throws<OptionsValidationException>(() => services.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(Options.DefaultName));

        Assert.DoesNotContain(IBucketSourceFactory.NotAdded, error.Failures);
        Assert.Contains(error.Failures, static failure => failure.StartsWith("Bucket.Pointer: ", StringComparison.Ordinal));
    }

    [Fact]
    public void Folder_WithoutTheBucketPackage_IsServedAsBefore()
    {
        using var tree = new TempTree();
        var services = new ServiceCollection().AddLogging().AddPeregrine(o => o.Root = tree.Root);
        using var provider = services.BuildServiceProvider();

        var options = provider.GetRequiredService<IOptionsMonitor<PeregrineOptions>>().Get(Options.DefaultName);

        Assert.Equal(tree.Root, options.Root);
        Assert.Null(Peregrine.Instances.PeregrineInstances.SourceOf(provider, "").Copied);
    }

    private static ServiceProvider Services(bool addBuckets, string pointer = "current")
    {
        var services = new ServiceCollection().AddLogging();
        services.AddPeregrine(o => o.Bucket = new() { Uri = "s3://site/www", Pointer = pointer, ServiceUrl = "http://127.0.0.1:9", ForcePathStyle = true });
        if (addBuckets)
        {
            services.AddPeregrineBuckets();
        }

        return services.BuildServiceProvider();
    }
}
