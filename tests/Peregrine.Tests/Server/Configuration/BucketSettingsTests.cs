using Peregrine.Server.Configuration;

namespace Peregrine.Tests.Server.Configuration;

public sealed class BucketSettingsTests
{
    // An endpoint, so that no region need be found (the SDK would look in the process's own environment and profile).
    private static readonly Dictionary<string, string> s_noEnvironment = new() { ["AWS_ENDPOINT_URL_S3"] = "http://127.0.0.1:9" };

    [Fact]
    public void BucketRoot_WithItsOptions_BecomesBucketOptions()
    {
        var loaded = SettingsLoader.Load(["s3://site-bucket/www", "--bucket-pointer", "current", "--bucket-poll", "2.5", "--bucket-path-style", "--bucket-notify", "/_peregrine/bucket-events"], s_noEnvironment);
        Assert.Empty(loaded.Errors);
        using var settings = loaded.Settings!;
        Assert.True(settings.ServesBucket);
        var options = new PeregrineOptions();
        settings.ApplyTo(options);
        Assert.Equal("", options.Root);
        Assert.NotNull(options.Bucket);
        Assert.Equal("s3://site-bucket/www", options.Bucket.Uri);
        Assert.Equal("current", options.Bucket.Pointer);
        Assert.Equal(TimeSpan.FromSeconds(2.5), options.Bucket.PollInterval);
        Assert.True(options.Bucket.ForcePathStyle);
        Assert.Equal("/_peregrine/bucket-events", settings.BucketNotify);
    }

    [Theory]
    [InlineData("s3://ab", "ROOT")]
    [InlineData("s3://bucket/a//b", "ROOT")]
    [InlineData("s3://site-bucket --bucket-pointer a/b", "--bucket-pointer")]
    [InlineData("s3://site-bucket --bucket-pointer releases", "--bucket-pointer")]
    [InlineData("s3://site-bucket --bucket-notify events", "--bucket-notify")]
    [InlineData("s3://site-bucket --bucket-poll soon", "--bucket-poll")]
    [InlineData(". --bucket-pointer current", "--bucket-pointer")]
    [InlineData(". --bucket-path-style", "--bucket-path-style")]
    public void WrongBucketSetting_StopsStartUp_NamingTheOption(string arguments, string option)
    {
        var loaded = SettingsLoader.Load(arguments.Split(' '), s_noEnvironment);
        Assert.Null(loaded.Settings);
        Assert.Contains(loaded.Errors, error => error.StartsWith(option, StringComparison.Ordinal));
    }

    [Fact]
    public void BucketRoot_NoEndpointAndNoRegion_StopsStartUp_NamingRoot()
    {
        if (Amazon.Runtime.FallbackRegionFactory.GetRegionEndpoint() is not null)
        {
            // This machine has a region configured (a profile, the variables): nothing to check.
            return;
        }

        var loaded = SettingsLoader.Load(["s3://site-bucket/www"], new Dictionary<string, string>());
        Assert.Null(loaded.Settings);
        Assert.Contains(loaded.Errors, error => error.StartsWith("ROOT", StringComparison.Ordinal) && error.Contains("AWS_REGION", StringComparison.Ordinal));
    }

    [Fact]
    public void BucketRootInConfigFile_IsNotTakenForAPath()
    {
        var folder = Path.Combine(Path.GetTempPath(), "peregrine-tests", Guid.NewGuid().ToString("N"));
        Directory.CreateDirectory(folder);
        try
        {
            var file = Path.Combine(folder, "peregrine.json");
            File.WriteAllText(file, """{ "root": "s3://site-bucket/www", "bucketPointer": "current" }""");
            var loaded = SettingsLoader.Load(["--config", file], s_noEnvironment);
            Assert.Empty(loaded.Errors);
            using var settings = loaded.Settings!;
            Assert.Equal("s3://site-bucket/www", settings.Root);
        }
        finally
        {
            Directory.Delete(folder, recursive: true);
        }
    }
}
