using Microsoft.Extensions.Logging;

namespace Peregrine.Sources.Bucket;

/// <summary>What <c>services.AddPeregrineBuckets()</c> registers: the core asks it for an instance's bucket and its rules.</summary>
internal sealed class BucketSourceFactory : IBucketSourceFactory
{
    public IEnumerable<string> Problems(BucketOptions options) => BucketOptionsRules.Problems(options);

    public ICopiedSource Create(BucketOptions options, ILoggerFactory loggerFactory) => BucketSource.Create(options, loggerFactory);
}
